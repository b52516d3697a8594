// Helpers shared by the GPU backend tests: the sgemm_cuda / sgemm_hip tasks
// read from kernels/, their tiled template rendered with chosen parameters,
// and GPU device options for quick runs.

#pragma once

#include <string>
#include <vector>

#include "actors/protocol/task.hpp"
#include "devices/gpu_device.hpp"
#include "devices/gpu_discovery.hpp"
#include "devices/scratch_dir.hpp"

namespace eat::devices::test {

/// The task in kernels/sgemm_<backend>/ with its reference and baseline
/// sources, tolerances of task.toml, and `workloads`.
task_spec gpu_sgemm_task(
  const std::string& backend, std::vector<workload> workloads);

/// The backend's tiled template with parameters {block_m, block_n, block_k,
/// thread_m, thread_n, unroll}.
std::string gpu_tiled_source(
  const std::string& backend, const std::vector<int>& params);

/// An sgemm_cuda kernel with the baseline's launch (16x16 blocks, one
/// thread per output) around `body`, which sees i, j, a, b, c, m, n, k and
/// the computed `sum`, and must write c[i * n + j].
std::string cuda_gemm_kernel(const std::string& body);

/// cuda_gemm_kernel(body) whose host code launches the kernel from a
/// thread of its own and joins it before returning: no thread is left
/// after the call, but one was started in it.
std::string cuda_gemm_kernel_from_thread(const std::string& body);

/// For the main() of a test program that needs a CUDA GPU: true (after
/// printing why) when there is none and the program is not just listing its
/// tests; the program then exits 77, which CTest reports as skipped.
bool skip_without_cuda_gpu(int argc, char** argv);

/// The built runner of `backend` ("cuda" or "hip").
std::string built_runner(const std::string& backend);

/// The GPUs of `backend` as its built runner sees them.
gpu_probe_result probe_built(const std::string& backend);

/// Options for quick runs: the built runner of `backend`, few samples.
gpu_options quick_gpu_options(
  const std::string& backend, const scratch_dir& work_dir);

/// Checks that a GPU device made from `gpu` and `opts` by a user that is
/// not root (a user id of no account, when the test runs as root) isolates
/// kernel code in a user namespace of its own, and does not with
/// user_namespace off: `task`'s baseline passes and the method line says
/// which, and whom kernel code ran as. Runs in a child, whose work
/// directory is that user's; the child uses no GPU runtime itself (the
/// device's peaks must be given by `opts`' overrides), so the caller may
/// have. Warns and checks less where the user cannot reach the runner or
/// where user namespaces are not allowed. Prints "user namespace check
/// (GPU, uid N): ..." with the method line's sandbox words, or why the
/// case could not run, for scripts/gpu-check.sh's figures.
void check_user_namespace_isolation(
  const gpu_info& gpu, const gpu_options& opts, const task_spec& task);

} // namespace eat::devices::test
