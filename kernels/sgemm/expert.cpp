// Expert sgemm baseline: OpenBLAS's cblas_sgemm, single-threaded. C = A·B,
// row-major, A m×k, B k×n, C m×n (docs/harness.md, kind "gemm"). Linked
// with -lopenblas (task.toml: expert_libs). Reported next to results by
// `eat tasks check` and bench/kernels_bench; speedups are never measured
// against it.
//
// Threads: OpenBLAS sizes its thread pool at load time from the CPUs this
// process may use; the runner pins itself to one core before loading the
// kernel, so no worker thread is started. openblas_set_num_threads(1) on
// the first call makes sure the calling thread does all the work anyway.

#include <cblas.h>
#include <cstdint>

extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  static const bool single = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)single;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(k), b, static_cast<int>(n), 0.0f, c,
              static_cast<int>(n));
}
