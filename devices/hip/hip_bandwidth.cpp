// HIP side of measure_copy_bandwidth (devices/gpu_probe.hpp): ten
// device-to-device copies of 256 MiB timed with events, after one untimed;
// of four times the Infinity Cache where that is larger (an MI300X's 256
// MB would have served part of a 256 MiB copy).
// Runs in eat-hip-runner --bandwidth INDEX (devices/gpu_runner/
// gpu_service.hpp), on the HIP runtime.

#include <hip/hip_runtime_api.h>

#include <algorithm>

#include "actors/protocol/error.hpp"
#include "devices/gpu_runner/gpu_harness.hpp"
#include "devices/gpu_runner/gpu_service.hpp"

namespace eat::devices {

namespace {

constexpr size_t min_copy_bytes = size_t{256} << 20;
constexpr int copies = 10;

struct buffers {
  void* src = nullptr;
  void* dst = nullptr;
  hipEvent_t start = nullptr;
  hipEvent_t stop = nullptr;
  ~buffers() {
    static_cast<void>(hipFree(src));
    static_cast<void>(hipFree(dst));
    if (start != nullptr)
      static_cast<void>(hipEventDestroy(start));
    if (stop != nullptr)
      static_cast<void>(hipEventDestroy(stop));
  }
};

caf::expected<double> fail(const char* what, hipError_t rc) {
  return make_error(error::device_unavailable,
    std::string{"copy bandwidth probe: "} + what + ": " + hipGetErrorName(rc));
}

} // namespace

caf::expected<double> measure_hip_copy_bandwidth(int index) {
  buffers b;
  hipError_t rc;
  if ((rc = hipSetDevice(index)) != hipSuccess)
    return fail("hipSetDevice", rc);
  hipDeviceProp_t p{};
  if ((rc = hipGetDeviceProperties(&p, index)) != hipSuccess)
    return fail("hipGetDeviceProperties", rc);
  auto copy_bytes = std::max<size_t>(
    min_copy_bytes, 4 * amd_infinity_cache_bytes(p.gcnArchName));
  if ((rc = hipMalloc(&b.src, copy_bytes)) != hipSuccess
      || (rc = hipMalloc(&b.dst, copy_bytes)) != hipSuccess)
    return fail("hipMalloc", rc);
  if ((rc = hipEventCreate(&b.start)) != hipSuccess
      || (rc = hipEventCreate(&b.stop)) != hipSuccess)
    return fail("hipEventCreate", rc);
  // Every call checked: copies that were never queued would give an
  // enormous bandwidth, which the gate would adopt (device_peak).
  if ((rc = hipMemset(b.src, 1, copy_bytes)) != hipSuccess)
    return fail("hipMemset", rc);
  if ((rc = hipMemcpy(b.dst, b.src, copy_bytes, hipMemcpyDeviceToDevice))
      != hipSuccess)
    return fail("hipMemcpy", rc);
  if ((rc = hipEventRecord(b.start)) != hipSuccess)
    return fail("hipEventRecord", rc);
  for (int i = 0; i < copies; ++i)
    if ((rc = hipMemcpyAsync(b.dst, b.src, copy_bytes, hipMemcpyDeviceToDevice))
        != hipSuccess)
      return fail("hipMemcpyAsync", rc);
  if ((rc = hipEventRecord(b.stop)) != hipSuccess)
    return fail("hipEventRecord", rc);
  if ((rc = hipEventSynchronize(b.stop)) != hipSuccess)
    return fail("copies", rc);
  float ms = 0;
  if ((rc = hipEventElapsedTime(&ms, b.start, b.stop)) != hipSuccess
      || ms <= 0)
    return fail("hipEventElapsedTime", rc);
  return 2.0 * copy_bytes * copies / (ms * 1e-3);
}

} // namespace eat::devices
