// CUDA side of gpu_probe.hpp: device discovery through the CUDA runtime
// (cudart, never the stub libcuda) and a health-check kernel, run by
// eat-cuda-runner --probe and --health INDEX (devices/gpu_runner/
// gpu_service.hpp, which declares these functions).
//
// Without a driver, cudaGetDeviceCount returns cudaErrorInsufficientDriver
// and leaves the count untouched (NOTES-LIBRARIES.md): the count starts at 0
// and any error means "no device".

#include "devices/gpu_probe.hpp"

#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

namespace eat::devices {

namespace {

constexpr int health_elements = 1 << 16;

__global__ void health_kernel(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 2.0f * in[i] + 1.0f;
}

std::string failure(const char* what, cudaError_t rc) {
  return std::string{what} + ": " + cudaGetErrorName(rc) + " ("
         + cudaGetErrorString(rc) + ")";
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

gpu_info describe(int index, const cudaDeviceProp& p) {
  gpu_info g;
  g.backend = "cuda";
  g.index = index;
  g.name = p.name;
  g.arch = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
  g.uuid = uuid_text(p.uuid);
  g.memory_bytes = p.totalGlobalMem;
  g.multiprocessors = p.multiProcessorCount;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index) == cudaSuccess)
    g.clock_khz = khz;
  return g;
}

/// Frees device memory when it leaves scope.
struct device_buffer {
  float* ptr = nullptr;
  ~device_buffer() {
    if (ptr != nullptr)
      cudaFree(ptr);
  }
};

} // namespace

gpu_probe_result probe_cuda() {
  gpu_probe_result out;
  out.built = true;
  int driver = 0;
  int runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  out.versions = "driver " + std::to_string(driver) + ", runtime "
                 + std::to_string(runtime);
  int count = 0;
  if (auto rc = cudaGetDeviceCount(&count); rc != cudaSuccess) {
    out.error = failure("cudaGetDeviceCount", rc);
    return out;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (auto rc = cudaGetDeviceProperties(&p, i); rc != cudaSuccess) {
      out.error = failure("cudaGetDeviceProperties", rc);
      continue;
    }
    out.devices.push_back(describe(i, p));
  }
  if (count == 0 && out.error.empty())
    out.error = "no CUDA device";
  return out;
}

gpu_health check_cuda(int index) {
  if (auto rc = cudaSetDevice(index); rc != cudaSuccess)
    return {false, failure("cudaSetDevice", rc)};
  std::vector<float> host(health_elements);
  for (int i = 0; i < health_elements; ++i)
    host[i] = static_cast<float>(i % 1024) * 0.5f;
  device_buffer in;
  device_buffer out;
  auto bytes = sizeof(float) * health_elements;
  if (auto rc = cudaMalloc(&in.ptr, bytes); rc != cudaSuccess)
    return {false, failure("cudaMalloc", rc)};
  if (auto rc = cudaMalloc(&out.ptr, bytes); rc != cudaSuccess)
    return {false, failure("cudaMalloc", rc)};
  cudaMemcpy(in.ptr, host.data(), bytes, cudaMemcpyHostToDevice);
  health_kernel<<<(health_elements + 255) / 256, 256>>>(in.ptr, out.ptr,
                                                        health_elements);
  if (auto rc = cudaGetLastError(); rc != cudaSuccess)
    return {false, failure("kernel launch", rc)};
  if (auto rc = cudaDeviceSynchronize(); rc != cudaSuccess)
    return {false, failure("cudaDeviceSynchronize", rc)};
  std::vector<float> result(health_elements);
  if (auto rc = cudaMemcpy(result.data(), out.ptr, bytes,
                           cudaMemcpyDeviceToHost);
      rc != cudaSuccess)
    return {false, failure("cudaMemcpy", rc)};
  for (int i = 0; i < health_elements; ++i)
    if (result[i] != 2.0f * host[i] + 1.0f)
      return {false, "element " + std::to_string(i) + " is wrong: got "
                       + std::to_string(result[i])};
  return {true, ""};
}

} // namespace eat::devices
