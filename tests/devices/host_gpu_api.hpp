// A gpu_api on host memory for the GPU harness's tests
// (devices/gpu_runner/gpu_api.hpp is the seam): "device memory" is
// aligned host memory, copies are memcpy, the stream is the calling thread
// and the two events read the steady clock, so host functions with a GPU
// entry ABI run through the harness exactly as kernels would. Used in the
// test process (backend "fake") and by the GPU runners on the CPU
// (tests/devices/runner_on_cpu.cpp), one thread at a time.

#pragma once

#include <cfenv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "actors/protocol/error.hpp"
#include "devices/gpu_runner/gpu_api.hpp"
#include "devices/kinds/uniform_fill.hpp"

namespace eat::devices::test {

/// A gpu_api on host memory: copies are memcpy, the stream is the calling
/// thread, events read the steady clock.
class host_gpu_api : public gpu_api {
public:
  /// A GPU of `backend` ("fake" in-process; "cuda" or "hip" in a runner).
  explicit host_gpu_api(const char* backend = "fake") : backend_(backend) {
    // nop
  }
  const char* backend() const override {
    return backend_;
  }
  /// The GPUs the runtime shows, as in visible(): index i is fake GPU
  /// visible()[i], "FAKE-<that>".
  gpu_probe_result probe() override {
    gpu_probe_result out;
    out.built = true;
    out.versions = "host memory runtime";
    auto shown = visible();
    for (size_t i = 0; i < shown.size(); ++i) {
      gpu_info g;
      g.backend = backend_;
      g.index = static_cast<int>(i);
      // A model of the peaks' table where a test names one.
      const char* name = std::getenv("EAT_TEST_GPU_NAME");
      g.name = name != nullptr ? name : "host memory";
      g.arch = std::string{backend_} == "hip" ? "gfx90a" : "sm_90";
      g.uuid = "FAKE-" + std::to_string(shown[i]);
      g.memory_bytes = uint64_t{1} << 30;
      g.multiprocessors = 1;
      out.devices.push_back(g);
    }
    return out;
  }
  /// Healthy unless EAT_TEST_GPU_UNHEALTHY is set in the environment (how
  /// a test breaks the GPU of a runner it starts).
  gpu_health check(int index) override {
    if (!shows(index))
      return {false, "no such fake GPU"};
    if (const char* why = std::getenv("EAT_TEST_GPU_UNHEALTHY"))
      return {false, why};
    return {true, ""};
  }
  /// Measured: copies of 16 MiB of host memory, read plus written; or
  /// EAT_TEST_GPU_COPY_GBPS GB/s where a test sets it.
  caf::expected<double> copy_bandwidth(int index) override {
    if (!shows(index))
      return make_error(error::device_unavailable, "no such fake GPU");
    if (const char* gbps = std::getenv("EAT_TEST_GPU_COPY_GBPS"))
      return std::atof(gbps) * 1e9;
    constexpr size_t bytes = size_t{16} << 20;
    std::vector<char> src(bytes, 1);
    std::vector<char> dst(bytes);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 4; ++i)
      std::memcpy(dst.data(), src.data() + (i & 1), bytes - 1);
    std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    return 2.0 * 4 * (bytes - 1) / s.count();
  }
  int visible_count() override {
    return static_cast<int>(visible().size());
  }
  std::string open(int index) override {
    opened_by_ = static_cast<long>(::getuid());
    if (!shows(index))
      return "no such fake GPU";
    opened_ = visible()[static_cast<size_t>(index)];
    return {};
  }
  gpu_identity identity() const override {
    return {
      "host memory", "FAKE-" + std::to_string(opened_), uint64_t{1} << 20};
  }
  void* stream() const override {
    return nullptr;
  }
  caf::expected<void*> allocate(size_t bytes) override {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (p == nullptr)
      return make_error(error::runner_failed, "out of fake device memory");
    return p;
  }
  void release(void* ptr) override {
    std::free(ptr);
  }
  std::string to_device(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return {};
  }
  std::string to_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return {};
  }
  std::string fill_async(void* ptr, int value, size_t bytes) override {
    std::memset(ptr, value, bytes);
    return {};
  }
  std::string fill_uniform_async(void* ptr, dtype t, size_t count, double lo,
    double hi, uint64_t seed) override {
    ++uniform_fills;
    // A GPU's rounding is not the host's to change: the fake draws in
    // the default environment, whatever a kernel left in this process.
    std::fenv_t kernels;
    std::fegetenv(&kernels);
    std::fesetenv(FE_DFL_ENV);
    fill_uniform(t, ptr, count, lo, hi, seed);
    std::fesetenv(&kernels);
    // A fill that rounds one element otherwise than the host's.
    if (misdraw_bfloat16 && t == dtype::bfloat16 && count > 3)
      static_cast<uint16_t*>(ptr)[3] ^= 1;
    return {};
  }
  bool misdraw_bfloat16 = false;
  int uniform_fills = 0;
  std::string reset_persisting_l2() override {
    ++l2_resets;
    return {};
  }
  int l2_resets = 0;
  /// `call_failure`, once, where a test set it: for the first kernel
  /// call of all (`fail_timed_call` 0) or for the timed call of that
  /// number (the start events recorded, counted from 1: the runner's own
  /// first use of its events at the open, then every call timed).
  std::string call_error() override {
    if (call_failure.empty() || timed_calls < fail_timed_call)
      return {};
    return std::exchange(call_failure, {});
  }
  std::string call_failure;
  int fail_timed_call = 0;
  int timed_calls = 0;
  /// Counts the calls (restored, for the tests).
  std::string restore_settings() override {
    ++restored;
    return {};
  }
  int restored = 0;
  std::string record(int event) override {
    if (event == 0)
      ++timed_calls;
    events_[event] = std::chrono::steady_clock::now();
    return {};
  }
  caf::expected<float> elapsed_ms(int from, int to) override {
    return std::chrono::duration<float, std::milli>(events_[to] - events_[from])
      .count();
  }
  std::string synchronize() override {
    return {};
  }
  std::string error_text(int code) const override {
    return "fake error " + std::to_string(code);
  }
  /// Names the user that opened the GPU, which a runner may have left
  /// since (a real GPU's device files may be root's alone).
  std::string clock_snapshot() override {
    return "host clocks (opened by uid " + std::to_string(opened_by_) + ")";
  }

private:
  /// The fake GPUs the runtime shows, by number: one, unless
  /// EAT_TEST_GPUS=N gives N; then, like the CUDA and HIP runtimes, only
  /// those named by index in the backend's list (CUDA_VISIBLE_DEVICES;
  /// HIP_VISIBLE_DEVICES first for "hip"), up to its first entry that is
  /// not one, unless EAT_TEST_GPUS_SEE_ALL is set (a runtime that ignores
  /// the list).
  std::vector<int> visible() const {
    const char* count = std::getenv("EAT_TEST_GPUS");
    if (count == nullptr)
      return {0};
    int n = std::atoi(count);
    std::vector<int> all;
    for (int i = 0; i < n; ++i)
      all.push_back(i);
    const char* list = std::getenv("CUDA_VISIBLE_DEVICES");
    if (std::string{backend_} == "hip" && std::getenv("HIP_VISIBLE_DEVICES"))
      list = std::getenv("HIP_VISIBLE_DEVICES");
    if (list == nullptr || std::getenv("EAT_TEST_GPUS_SEE_ALL") != nullptr)
      return all;
    std::vector<int> shown;
    for (const char* p = list; *p != '\0';) {
      char* end = nullptr;
      long i = std::strtol(p, &end, 10);
      if (end == p || i < 0 || i >= n || (*end != ',' && *end != '\0'))
        break;
      shown.push_back(static_cast<int>(i));
      p = *end == ',' ? end + 1 : end;
    }
    return shown;
  }
  bool shows(int index) const {
    return index >= 0 && static_cast<size_t>(index) < visible().size();
  }

  const char* backend_;
  int opened_ = 0;
  long opened_by_ = -1;
  std::chrono::steady_clock::time_point events_[2];
};

} // namespace eat::devices::test
