// CUDA kernels run on the CPU for tests (tests/devices/cuda_on_cpu/
// prelude.hpp says how): a GPU definition task's CUDA source turned into a
// candidate for the CPU harness, so that a CUDA baseline or template
// instance is checked against the task's reference without a GPU.

#pragma once

#include <string>

namespace eat::devices::test {

/// Which entry point the C++ gets: the CPU harness's (`cpu`), or the GPU
/// entry kept as it is (`gpu`: for a GPU runner whose device memory is host
/// memory, tests/devices/nvcc_on_cpu.cpp).
enum class entry { cpu, gpu };

/// `cu` (CUDA source with the GPU entry point `extern "C" int
/// eat_kernel(inputs, outputs, axes, stream)`, or kind gemm's `extern "C"
/// int eat_gemm(a, b, c, m, n, k, stream)`) as C++ for the CPU: the
/// prelude prepended, the CUDA includes removed, every `<<<...>>>` launch
/// rewritten, and the CPU entry point of the same name (`extern "C" void
/// eat_kernel(inputs, outputs, axes)`, `void eat_gemm(a, b, c, m, n, k)`)
/// that calls the GPU one and aborts if it fails (with entry::gpu, the GPU
/// entry as it is). Throws std::runtime_error naming what it cannot
/// rewrite.
std::string cuda_on_cpu(const std::string& cu, entry abi = entry::cpu);

/// The same for a HIP source (`#include <hip/hip_runtime.h>`, hip* names,
/// __shfl_xor without a mask): warps are 64-lane wavefronts, as on the
/// AMD GPUs the HIP tasks target.
std::string hip_on_cpu(const std::string& hip, entry abi = entry::cpu);

} // namespace eat::devices::test
