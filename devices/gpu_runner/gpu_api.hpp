// The few GPU runtime calls the GPU runner's harness needs, behind one
// interface so that the harness (devices/gpu_runner/) is written once for
// CUDA (devices/cuda/cuda_api.cpp, cudart) and HIP (devices/hip/hip_api.cpp,
// the HIP runtime). Each runner executable links exactly one implementation,
// which provides make_gpu_api().
//
// Owned by the runner's harness; used from the runner's only harness thread.
// Every call returns "" on success or the runtime's error name and text.

#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "devices/gpu_probe.hpp"
#include "devices/kinds/dtype.hpp"

namespace eat::devices {

/// What the runtime says about the selected GPU.
struct gpu_identity {
  std::string name;
  /// UUID ("GPU-...", CUDA) or PCI bus id (HIP).
  std::string identity;
  /// Bytes of the last cache before memory: L2, or an AMD GPU's Infinity
  /// Cache where it has one (amd_infinity_cache_bytes).
  uint64_t cache_bytes = 0;
};

/// A GPU runtime: device selection, memory, one stream, two timing events.
class gpu_api {
public:
  virtual ~gpu_api();

  /// "cuda" or "hip".
  virtual const char* backend() const = 0;

  /// Every GPU the runtime sees, and its versions (`--probe`; no open()).
  virtual gpu_probe_result probe() = 0;

  /// Runs a known kernel on GPU `index` and checks its output
  /// (`--health INDEX`; no open()).
  virtual gpu_health check(int index) = 0;

  /// Device-to-device copy bandwidth of GPU `index`, bytes read plus
  /// written a second (`--bandwidth INDEX`; no open()).
  virtual caf::expected<double> copy_bandwidth(int index) = 0;

  /// How many GPUs the runtime shows this process (no open()).
  virtual int visible_count() = 0;

  /// Makes GPU `index` current and creates the stream and the two events.
  virtual std::string open(int index) = 0;

  /// Describes the GPU chosen with open().
  virtual gpu_identity identity() const = 0;

  /// The stream kernels are given (as the ABI's `void* stream`).
  virtual void* stream() const = 0;

  virtual caf::expected<void*> allocate(size_t bytes) = 0;
  virtual void release(void* ptr) = 0;
  virtual std::string to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual std::string to_host(void* dst, const void* src, size_t bytes) = 0;

  /// Sets `bytes` at `ptr` to `value`, asynchronously on the stream.
  virtual std::string fill_async(void* ptr, int value, size_t bytes) = 0;

  /// Fills the `count` elements of floating type `t` at `ptr` as
  /// fill_uniform (devices/kinds/uniform_fill.hpp) fills host memory, by a
  /// kernel on the stream (devices/gpu_runner/device_fill.hpp).
  virtual std::string fill_uniform_async(
    void* ptr, dtype t, size_t count, double lo, double hi, uint64_t seed)
    = 0;

  /// Evicts persisting L2 lines and sets the persisting L2 limit to 0 (a
  /// no-op where the hardware has no persisting L2).
  virtual std::string reset_persisting_l2() = 0;

  /// Puts back the device-wide settings that a kernel could leave changed
  /// to slow the other kernel's calls, as they were when the GPU was opened
  /// (CUDA: the cache configuration and the L2 fetch granularity); a
  /// no-op where there are none.
  virtual std::string restore_settings() = 0;

  /// The runtime's error from a kernel's call ("" where none), read right
  /// after the call returns and before any other runtime call: HIP before
  /// ROCm 7.0 keeps only the last call's error, so a launch that failed
  /// inside a call that did not check it was lost by the time the
  /// synchronise asked (its outputs left poisoned: `incorrect`, where this
  /// gives `runtime_error`).
  virtual std::string call_error() = 0;

  /// Records an event on the stream: the start (0) or the stop (1) of a
  /// call.
  virtual std::string record(int event) = 0;

  /// Milliseconds from event `from` to event `to` (both complete).
  virtual caf::expected<float> elapsed_ms(int from, int to) = 0;

  /// Waits until all work on the whole device is done, and reports any
  /// error a kernel left behind.
  virtual std::string synchronize() = 0;

  /// Name and text of a runtime error code returned by a kernel entry.
  virtual std::string error_text(int code) const = 0;

  /// The GPU's clocks, temperature and throttle reasons now, e.g. "SM 1980
  /// MHz, memory 2619 MHz, 41 C, throttle reasons: none", or why they
  /// cannot be read (no NVML; no amdgpu sysfs files).
  virtual std::string clock_snapshot() = 0;
};

/// The implementation the runner was linked with.
std::unique_ptr<gpu_api> make_gpu_api();

/// Device memory owned by the harness; freed when it leaves scope.
class device_memory {
public:
  device_memory() = default;
  device_memory(gpu_api& api, void* ptr, size_t bytes)
    : api_(&api), ptr_(ptr), bytes_(bytes) {
    // nop
  }
  device_memory(device_memory&& other) noexcept;
  device_memory& operator=(device_memory&& other) noexcept;
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;
  ~device_memory();

  /// Allocates `bytes` on the GPU of `api`.
  static caf::expected<device_memory> make(gpu_api& api, size_t bytes);

  void* get() const {
    return ptr_;
  }

  float* floats() const {
    return static_cast<float*>(ptr_);
  }

  size_t bytes() const {
    return bytes_;
  }

private:
  gpu_api* api_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

} // namespace eat::devices
