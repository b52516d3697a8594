// The CUDA implementation of devices/gpu_runner/gpu_api.hpp, on the CUDA
// runtime (cudart) only: the runner never links the driver library, so a
// stub libcuda can never stand in for the real one.

#include <chrono>
#include <cstdio>
#include <thread>

#include <cuda_runtime.h>

#include "actors/protocol/error.hpp"
#include "devices/cuda/nvml_clocks.hpp"
#include "devices/gpu_runner/device_fill.hpp"
#include "devices/gpu_runner/gpu_api.hpp"
#include "devices/gpu_runner/gpu_service.hpp"

namespace eat::devices {

namespace {

std::string text(const char* what, cudaError_t rc) {
  if (rc == cudaSuccess)
    return {};
  return std::string{what} + ": " + cudaGetErrorName(rc) + " ("
         + cudaGetErrorString(rc) + ")";
}

/// Whether `rc` is success; the runtime's last error cleared where not
/// (a query the GPU does not support must not fail a later synchronise).
bool cleared(cudaError_t rc) {
  if (rc == cudaSuccess)
    return true;
  cudaGetLastError();
  return false;
}

std::string uuid_text(const cudaUUID_t& id) {
  std::string out = "GPU-";
  char buf[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x",
      static_cast<unsigned char>(id.bytes[i]));
    out += buf;
    if (i == 3 || i == 5 || i == 7 || i == 9)
      out += '-';
  }
  return out;
}

class cuda_api final : public gpu_api {
public:
  ~cuda_api() override {
    for (auto* e : events_)
      if (e != nullptr)
        cudaEventDestroy(e);
    if (stream_ != nullptr)
      cudaStreamDestroy(stream_);
  }

  const char* backend() const override {
    return "cuda";
  }

  gpu_probe_result probe() override {
    return probe_cuda();
  }

  gpu_health check(int index) override {
    return check_cuda(index);
  }

  caf::expected<double> copy_bandwidth(int index) override {
    return measure_cuda_copy_bandwidth(index);
  }

  int visible_count() override {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
  }

  std::string open(int index) override {
    // cudaSetDevice creates the context. A GPU in the EXCLUSIVE_PROCESS
    // compute mode refuses it while another process holds one: the runner
    // before, killed at its deadline, may still be torn down (its kernel
    // stopped) when this one starts. Waits for that up to 10 s.
    auto rc = cudaSetDevice(index);
    for (int i = 0; rc == cudaErrorDevicesUnavailable && i < 100; ++i) {
      cudaGetLastError();
      std::this_thread::sleep_for(std::chrono::milliseconds{100});
      rc = cudaSetDevice(index);
    }
    if (auto why = text("cudaSetDevice", rc); !why.empty())
      return why;
    cudaDeviceProp p{};
    if (auto why = text("cudaGetDeviceProperties",
          cudaGetDeviceProperties(&p, index));
        !why.empty())
      return why;
    identity_ = {p.name, uuid_text(p.uuid), static_cast<uint64_t>(p.l2CacheSize)};
    persisting_l2_ = p.persistingL2CacheMaxSize > 0;
    // A blocking stream: a kernel launched on the legacy default stream
    // instead of the given one is still ordered between the two events.
    if (auto why = text("cudaStreamCreate", cudaStreamCreate(&stream_));
        !why.empty())
      return why;
    for (auto& e : events_)
      if (auto why = text("cudaEventCreate", cudaEventCreate(&e)); !why.empty())
        return why;
    // The device-wide settings as the runtime set them, before any kernel
    // code is loaded; restore_settings puts them back before every call.
    has_cache_config_ = cleared(cudaDeviceGetCacheConfig(&cache_config_));
    has_fetch_granularity_ = cleared(
      cudaDeviceGetLimit(&fetch_granularity_, cudaLimitMaxL2FetchGranularity));
    return {};
  }

  gpu_identity identity() const override {
    return identity_;
  }

  void* stream() const override {
    return stream_;
  }

  caf::expected<void*> allocate(size_t bytes) override {
    void* ptr = nullptr;
    if (auto why = text("cudaMalloc", cudaMalloc(&ptr, bytes)); !why.empty())
      return make_error(error::runner_failed, why);
    return ptr;
  }

  void release(void* ptr) override {
    cudaFree(ptr);
  }

  std::string to_device(void* dst, const void* src, size_t bytes) override {
    return text("cudaMemcpy (to device)",
      cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  }

  std::string to_host(void* dst, const void* src, size_t bytes) override {
    return text("cudaMemcpy (to host)",
      cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
  }

  std::string fill_async(void* ptr, int value, size_t bytes) override {
    return text("cudaMemsetAsync", cudaMemsetAsync(ptr, value, bytes, stream_));
  }

  std::string fill_uniform_async(void* ptr, dtype t, size_t count, double lo,
    double hi, uint64_t seed) override {
    auto rc = launch_uniform_fill(ptr, t, count, static_cast<float>(lo),
      static_cast<float>(hi - lo), seed, stream_);
    if (rc < 0)
      return std::string{"uniform fill: no fill for "} + to_string(t);
    return text("uniform fill kernel launch", static_cast<cudaError_t>(rc));
  }

  /// Resets what a kernel could have set to persist in L2: the persisting
  /// lines, the set-aside size and the harness stream's access policy
  /// window (which would otherwise carry over to the other kernel's
  /// calls). A GPU with no persisting L2 (before sm_80; some MIG or vGPU
  /// setups report none) has nothing to reset.
  std::string reset_persisting_l2() override {
    if (!persisting_l2_)
      return {};
    auto tolerated = [](cudaError_t rc) {
      if (rc != cudaErrorUnsupportedLimit && rc != cudaErrorNotSupported)
        return rc;
      cudaGetLastError();
      return cudaSuccess;
    };
    if (auto why = text("cudaCtxResetPersistingL2Cache",
          tolerated(cudaCtxResetPersistingL2Cache()));
        !why.empty())
      return why;
    if (auto why = text("cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0)",
          tolerated(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0)));
        !why.empty())
      return why;
    cudaStreamAttrValue none{};
    none.accessPolicyWindow.num_bytes = 0;
    return text("cudaStreamSetAttribute(cudaStreamAttributeAccessPolicyWindow)",
      tolerated(cudaStreamSetAttribute(
        stream_, cudaStreamAttributeAccessPolicyWindow, &none)));
  }

  /// A kernel could set a cache configuration or an L2 fetch granularity
  /// that slows the other kernel at the end of its call, and its own at
  /// the start of the next (review of the GPU harness): each is read, and
  /// set back where it changed, before every call the harness times.
  std::string restore_settings() override {
    if (cudaFuncCache now{}; has_cache_config_
                             && cleared(cudaDeviceGetCacheConfig(&now))
                             && now != cache_config_)
      if (auto why = text("cudaDeviceSetCacheConfig",
            cudaDeviceSetCacheConfig(cache_config_));
          !why.empty())
        return why;
    if (size_t now = 0;
        has_fetch_granularity_
        && cleared(cudaDeviceGetLimit(&now, cudaLimitMaxL2FetchGranularity))
        && now != fetch_granularity_)
      return text("cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity)",
        cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, fetch_granularity_));
    return {};
  }

  std::string call_error() override {
    return text("cudaGetLastError (a launch in the kernel's call failed)",
      cudaGetLastError());
  }

  std::string record(int event) override {
    return text("cudaEventRecord", cudaEventRecord(events_[event], stream_));
  }

  caf::expected<float> elapsed_ms(int from, int to) override {
    float ms = 0;
    if (auto why = text("cudaEventElapsedTime",
          cudaEventElapsedTime(&ms, events_[from], events_[to]));
        !why.empty())
      return make_error(error::runner_failed, why);
    return ms;
  }

  std::string synchronize() override {
    if (auto why = text("cudaDeviceSynchronize", cudaDeviceSynchronize());
        !why.empty())
      return why;
    // An earlier call failed, most often a kernel launch (too many
    // resources asked): the candidate learns which.
    return text("cudaGetLastError (an earlier call failed, such as a kernel "
                "launch)",
      cudaGetLastError());
  }

  std::string error_text(int code) const override {
    auto rc = static_cast<cudaError_t>(code);
    return std::string{cudaGetErrorName(rc)} + " (" + cudaGetErrorString(rc)
           + ")";
  }

  std::string clock_snapshot() override {
    return nvml_.snapshot(identity_.identity);
  }

private:
  nvml_clocks nvml_;
  gpu_identity identity_;
  cudaStream_t stream_ = nullptr;
  bool persisting_l2_ = false;
  cudaFuncCache cache_config_ = cudaFuncCachePreferNone;
  bool has_cache_config_ = false;
  size_t fetch_granularity_ = 0;
  bool has_fetch_granularity_ = false;
  cudaEvent_t events_[2] = {nullptr, nullptr};
};

} // namespace

std::unique_ptr<gpu_api> make_gpu_api() {
  return std::make_unique<cuda_api>();
}

} // namespace eat::devices
