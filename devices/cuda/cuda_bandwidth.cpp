// CUDA side of measure_copy_bandwidth (devices/gpu_probe.hpp): ten
// device-to-device copies of 256 MiB timed with events, after one untimed.
// Runs in eat-cuda-runner --bandwidth INDEX (devices/gpu_runner/
// gpu_service.hpp), on the CUDA runtime.

#include <cuda_runtime.h>

#include "actors/protocol/error.hpp"
#include "devices/gpu_runner/gpu_service.hpp"

namespace eat::devices {

namespace {

constexpr size_t copy_bytes = size_t{256} << 20;
constexpr int copies = 10;

struct buffers {
  void* src = nullptr;
  void* dst = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  ~buffers() {
    cudaFree(src);
    cudaFree(dst);
    if (start != nullptr)
      cudaEventDestroy(start);
    if (stop != nullptr)
      cudaEventDestroy(stop);
  }
};

caf::expected<double> fail(const char* what, cudaError_t rc) {
  return make_error(error::device_unavailable,
    std::string{"copy bandwidth probe: "} + what + ": " + cudaGetErrorName(rc));
}

} // namespace

caf::expected<double> measure_cuda_copy_bandwidth(int index) {
  buffers b;
  cudaError_t rc;
  if ((rc = cudaSetDevice(index)) != cudaSuccess)
    return fail("cudaSetDevice", rc);
  if ((rc = cudaMalloc(&b.src, copy_bytes)) != cudaSuccess
      || (rc = cudaMalloc(&b.dst, copy_bytes)) != cudaSuccess)
    return fail("cudaMalloc", rc);
  if ((rc = cudaEventCreate(&b.start)) != cudaSuccess
      || (rc = cudaEventCreate(&b.stop)) != cudaSuccess)
    return fail("cudaEventCreate", rc);
  // Every call checked: copies that were never queued would give an
  // enormous bandwidth, which the gate would adopt (device_peak).
  if ((rc = cudaMemset(b.src, 1, copy_bytes)) != cudaSuccess)
    return fail("cudaMemset", rc);
  if ((rc = cudaMemcpy(b.dst, b.src, copy_bytes, cudaMemcpyDeviceToDevice))
      != cudaSuccess)
    return fail("cudaMemcpy", rc);
  if ((rc = cudaEventRecord(b.start)) != cudaSuccess)
    return fail("cudaEventRecord", rc);
  for (int i = 0; i < copies; ++i)
    if ((rc
          = cudaMemcpyAsync(b.dst, b.src, copy_bytes, cudaMemcpyDeviceToDevice))
        != cudaSuccess)
      return fail("cudaMemcpyAsync", rc);
  if ((rc = cudaEventRecord(b.stop)) != cudaSuccess)
    return fail("cudaEventRecord", rc);
  if ((rc = cudaEventSynchronize(b.stop)) != cudaSuccess
      || (rc = cudaGetLastError()) != cudaSuccess)
    return fail("copies", rc);
  float ms = 0;
  if ((rc = cudaEventElapsedTime(&ms, b.start, b.stop)) != cudaSuccess
      || ms <= 0)
    return fail("cudaEventElapsedTime", rc);
  return 2.0 * copy_bytes * copies / (ms * 1e-3);
}

} // namespace eat::devices
