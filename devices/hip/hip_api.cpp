// The HIP implementation of devices/gpu_runner/gpu_api.hpp, on the HIP
// runtime's host API (libamdhip64); compiled by the host compiler, no
// device code. AMD GPUs have no persisting L2, so that reset is a no-op.

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <hip/hip_runtime_api.h>

#include "actors/protocol/error.hpp"
#include "devices/gpu_runner/amd_clocks.hpp"
#include "devices/gpu_runner/device_fill.hpp"
#include "devices/gpu_runner/gpu_api.hpp"
#include "devices/gpu_runner/gpu_harness.hpp"
#include "devices/gpu_runner/gpu_service.hpp"

namespace eat::devices {

namespace {

std::string text(const char* what, hipError_t rc) {
  if (rc == hipSuccess)
    return {};
  return std::string{what} + ": " + hipGetErrorName(rc) + " ("
         + hipGetErrorString(rc) + ")";
}

class hip_api final : public gpu_api {
public:
  ~hip_api() override {
    for (auto* e : events_)
      if (e != nullptr)
        static_cast<void>(hipEventDestroy(e));
    if (stream_ != nullptr)
      static_cast<void>(hipStreamDestroy(stream_));
  }

  const char* backend() const override {
    return "hip";
  }

  gpu_probe_result probe() override {
    return probe_hip();
  }

  gpu_health check(int index) override {
    return check_hip(index);
  }

  caf::expected<double> copy_bandwidth(int index) override {
    return measure_hip_copy_bandwidth(index);
  }

  int visible_count() override {
    int count = 0;
    return hipGetDeviceCount(&count) == hipSuccess ? count : 0;
  }

  std::string open(int index) override {
    if (auto why = text("hipSetDevice", hipSetDevice(index)); !why.empty())
      return why;
    hipDeviceProp_t p{};
    if (auto why
        = text("hipGetDeviceProperties", hipGetDeviceProperties(&p, index));
        !why.empty())
      return why;
    char bus[32];
    std::snprintf(bus, sizeof(bus), "%04x:%02x:%02x", p.pciDomainID,
      p.pciBusID, p.pciDeviceID);
    // The sysfs folder of its clocks (amd_clocks.hpp): "0000:c1:00.0".
    char pci[32] = {};
    if (hipDeviceGetPCIBusId(pci, sizeof(pci), index) == hipSuccess) {
      pci_ = pci;
    } else {
      pci_ = std::string{bus} + ".0";
      // Cleared: from ROCm 7.0 hipGetLastError keeps an error until it is
      // read, as CUDA's does, and synchronize would report this one.
      static_cast<void>(hipGetLastError());
    }
    for (auto& c : pci_)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    identity_ = {p.name, bus,
      std::max(static_cast<uint64_t>(p.l2CacheSize),
        amd_infinity_cache_bytes(p.gcnArchName))};
    // A blocking stream, ordered with the null stream (see cuda_api.cpp).
    if (auto why = text("hipStreamCreate", hipStreamCreate(&stream_));
        !why.empty())
      return why;
    for (auto& e : events_)
      if (auto why = text("hipEventCreate", hipEventCreate(&e)); !why.empty())
        return why;
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
    if (auto why = text("hipMalloc", hipMalloc(&ptr, bytes)); !why.empty())
      return make_error(error::runner_failed, why);
    return ptr;
  }

  void release(void* ptr) override {
    static_cast<void>(hipFree(ptr));
  }

  std::string to_device(void* dst, const void* src, size_t bytes) override {
    return text(
      "hipMemcpy (to device)", hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice));
  }

  std::string to_host(void* dst, const void* src, size_t bytes) override {
    return text(
      "hipMemcpy (to host)", hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost));
  }

  std::string fill_async(void* ptr, int value, size_t bytes) override {
    return text("hipMemsetAsync", hipMemsetAsync(ptr, value, bytes, stream_));
  }

  std::string fill_uniform_async(void* ptr, dtype t, size_t count, double lo,
    double hi, uint64_t seed) override {
    auto rc = launch_uniform_fill(ptr, t, count, static_cast<float>(lo),
      static_cast<float>(hi - lo), seed, stream_);
    if (rc < 0)
      return std::string{"uniform fill: no fill for "} + to_string(t);
    return text("uniform fill kernel launch", static_cast<hipError_t>(rc));
  }

  std::string reset_persisting_l2() override {
    return {};
  }

  /// AMD GPUs have no cache configuration (hipDeviceSetCacheConfig is a
  /// no-op) and no L2 fetch granularity limit.
  std::string restore_settings() override {
    return {};
  }

  std::string call_error() override {
    return text("hipGetLastError (a launch in the kernel's call failed)",
      hipGetLastError());
  }

  std::string record(int event) override {
    return text("hipEventRecord", hipEventRecord(events_[event], stream_));
  }

  caf::expected<float> elapsed_ms(int from, int to) override {
    float ms = 0;
    if (auto why = text("hipEventElapsedTime",
          hipEventElapsedTime(&ms, events_[from], events_[to]));
        !why.empty())
      return make_error(error::runner_failed, why);
    return ms;
  }

  std::string synchronize() override {
    if (auto why = text("hipDeviceSynchronize", hipDeviceSynchronize());
        !why.empty())
      return why;
    return text("hipGetLastError (an earlier call failed, such as a kernel "
                "launch)",
      hipGetLastError());
  }

  std::string error_text(int code) const override {
    auto rc = static_cast<hipError_t>(code);
    return std::string{hipGetErrorName(rc)} + " (" + hipGetErrorString(rc)
           + ")";
  }

  std::string clock_snapshot() override {
    return amd_clock_snapshot(pci_);
  }

private:
  gpu_identity identity_;
  std::string pci_;
  hipStream_t stream_ = nullptr;
  hipEvent_t events_[2] = {nullptr, nullptr};
};

} // namespace

std::unique_ptr<gpu_api> make_gpu_api() {
  return std::make_unique<hip_api>();
}

} // namespace eat::devices
