// Specification of definition tasks on a real CUDA GPU (ctest label "gpu";
// run by scripts/gpu-check.sh): gemm_n4096_k4096's naive baseline passes on
// every workload of the task, a wrong kernel is incorrect, a write past C
// is caught, a tiled, a tensor-core and a warp-dot instance pass, and the
// cuBLAS expert passes and is reported with its speedup; the baselines and
// template instances of the CUDA MLA and GQA decode, rmsnorm and softmax
// tasks agree with their references.
// On a machine without a CUDA GPU every case is skipped (exit code 77,
// which CTest reports as skipped, never as passed).

#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "actors/agent/render.hpp"
#include "actors/protocol/error.hpp"
#include "devices/gpu_device.hpp"
#include "runtime/task_file.hpp"
#include "tests/devices/gpu_support.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// A naive fp16 kernel with the baseline's launch; `body` runs after the
/// sum with i, j, a, b, c, m, n, k and `sum` in scope, and must store C.
std::string gemm_kernel(const std::string& body) {
  return R"(#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
__global__ void g(const __half* a, const __half* b, __half* c, int64_t m,
                  int64_t n, int64_t k) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t i = blockIdx.y * int64_t{blockDim.y} + threadIdx.y;
  if (i >= m || j >= n) return;
  float sum = 0.0f;
  for (int64_t p = 0; p < k; ++p)
    sum += __half2float(a[i * k + p]) * __half2float(b[j * k + p]);
)" + body + R"(
}
extern "C" int eat_kernel(const void* const* in, void* const* out,
                          const int64_t* axes, void* stream) {
  const int64_t m = axes[0], n = axes[1], k = axes[2];
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (m + 15) / 16);
  g<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(
    static_cast<const __half*>(in[0]), static_cast<const __half*>(in[1]),
    static_cast<__half*>(out[0]), m, n, k);
  return static_cast<int>(cudaGetLastError());
}
)";
}

struct fixture {
  scratch_dir dir = make_temp_dir();
  std::unique_ptr<device> dev;
  task_spec task;

  fixture() {
    auto loaded = load_task(
      std::filesystem::path{EAT_SOURCE_DIR} / "kernels", "gemm_n4096_k4096");
    INFO((loaded ? std::string{} : render(loaded.error())));
    REQUIRE(loaded);
    task = std::move(*loaded);
    auto made = make_cuda_device("cuda0", 0, quick_gpu_options("cuda", dir));
    INFO((made ? std::string{} : render(made.error())));
    REQUIRE(made);
    dev = std::move(*made);
  }

  /// Keeps the workloads whose M is in `ms`.
  void only(std::vector<int64_t> ms) {
    std::vector<workload> kept;
    for (const auto& w : task.workloads)
      if (std::find(ms.begin(), ms.end(), w.abi_axes[0]) != ms.end())
        kept.push_back(w);
    REQUIRE(kept.size() == ms.size());
    task.workloads = std::move(kept);
  }

  /// M of the workload named `name`.
  int64_t rows_of(const std::string& name) const {
    for (const auto& w : task.workloads)
      if (w.name == name)
        return w.abi_axes.at(0);
    return -1;
  }

  eval_result evaluate(const std::string& source, uint64_t seed = 11) {
    return dev->evaluate(task, make_candidate("c", source), seed);
  }
};

} // namespace

TEST_CASE("on a CUDA GPU the gemm_n4096_k4096 baseline passes on every "
          "workload") {
  fixture f;
  auto result = f.evaluate(f.task.baseline_source);
  INFO(result.detail << result.build_log);
  REQUIRE(result.status == eval_status::passed);
  REQUIRE(result.workloads.size() == f.task.workloads.size());
  for (const auto& w : result.workloads) {
    INFO(w.workload);
    CHECK(w.status == eval_status::passed);
    CHECK(w.candidate_median_ns > 0);
  }
  CHECK(result.geomean_speedup > 0.5);
  CHECK(result.geomean_speedup < 2);
}

TEST_CASE("on a CUDA GPU a wrong fp16 gemm is incorrect") {
  fixture f;
  f.only({7, 64});
  auto result
    = f.evaluate(gemm_kernel("c[i * n + j] = __float2half_rn(sum * 1.01f);"));
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK_THAT(result.detail, Catch::Contains("C["));
}

TEST_CASE("on a CUDA GPU a write past C is caught") {
  fixture f;
  f.only({7});
  auto result = f.evaluate(gemm_kernel(
    "c[i * n + j] = __float2half_rn(sum);"
    " if (i == m - 1 && j == n - 1) c[m * n + 5] = __float2half_rn(1.0f);"));
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK_THAT(result.detail, Catch::Contains("outside its output buffer 'C'"));
}

TEST_CASE("on a CUDA GPU a tiled, a tensor-core and a warp-dot instance "
          "pass") {
  fixture f;
  f.only({1, 7, 256});
  for (const auto& [family, params] :
       {std::pair{std::string{"tiled"},
          param_map{{"block_m", "64"}, {"block_n", "64"}, {"block_k", "16"},
            {"thread_m", "4"}, {"thread_n", "4"}}},
         std::pair{std::string{"tensor_core"},
           param_map{{"warps_m", "2"}, {"warps_n", "2"}, {"frags_m", "2"},
             {"frags_n", "2"}, {"block_k", "32"}}},
         std::pair{std::string{"warp_dot"},
           param_map{{"rows", "4"}, {"cols", "2"}, {"warps", "4"},
             {"vec", "8"}}}}) {
    const template_family* fam = nullptr;
    for (const auto& x : f.task.families)
      if (x.name == family)
        fam = &x;
    REQUIRE(fam != nullptr);
    auto source = render_template(*fam, params);
    REQUIRE(source);
    auto result = f.evaluate(*source);
    INFO(family << ": " << result.detail << result.build_log);
    CHECK(result.status == eval_status::passed);
    std::printf("gemm_n4096_k4096 %s: geomean speedup %.2f\n",
      family.c_str(), result.geomean_speedup);
    for (const auto& w : result.workloads)
      std::printf("gemm_n4096_k4096 %s, M = %lld: median %.1f us, baseline "
                  "%.1f us, %.1f %% of speed of light\n",
        family.c_str(), static_cast<long long>(f.rows_of(w.workload)),
        w.candidate_median_ns / 1e3, w.baseline_median_ns / 1e3,
        100 * w.sol_fraction);
  }
}

TEST_CASE("on a CUDA GPU the cuBLAS expert passes and is reported") {
  fixture f;
  f.only({16, 256});
  auto result = f.evaluate(f.task.expert_source);
  INFO(result.detail << result.build_log);
  REQUIRE(result.status == eval_status::passed);
  CHECK(result.geomean_speedup > 1);
  for (const auto& w : result.workloads)
    std::printf("gemm_n4096_k4096 cuBLAS expert, %s: median %.1f us, "
                "baseline %.1f us\n",
      w.workload.c_str(), w.candidate_median_ns / 1e3,
      w.baseline_median_ns / 1e3);
  std::printf("gemm_n4096_k4096 cuBLAS expert: geomean speedup %.2f over the "
              "naive baseline; %s\n",
    result.geomean_speedup, result.method.c_str());
}

namespace {

/// Keeps the workloads of `task` at `picks` (indices into its workloads).
void keep_workloads(task_spec& task, const std::vector<size_t>& picks) {
  std::vector<workload> kept;
  for (size_t i : picks) {
    REQUIRE(i < task.workloads.size());
    kept.push_back(task.workloads[i]);
  }
  task.workloads = std::move(kept);
}

} // namespace

TEST_CASE("on a CUDA GPU the decode, rmsnorm and softmax baselines and "
          "template instances agree with their references") {
  scratch_dir dir = make_temp_dir();
  auto made = make_cuda_device("cuda0", 0, quick_gpu_options("cuda", dir));
  REQUIRE(made);
  // Decode: batch 1, the shortest requests. rmsnorm: batch 1, 170 (from
  // L2) and 8804 (144 MB a call). softmax: its first three shapes.
  const std::vector<std::pair<const char*, std::vector<size_t>>> tasks = {
    {"mla_paged_decode_h16_ckv512_kpe64_ps1_cuda", {0, 1, 2}},
    {"gqa_paged_decode_h32_kv4_d128_ps1_cuda", {0, 1, 2}},
    {"rmsnorm_h4096_cuda", {0, 8, 9}}, {"softmax_cuda", {0, 1, 2}}};
  for (const auto& [name, picks] : tasks) {
    INFO(name);
    auto loaded
      = load_task(std::filesystem::path{EAT_SOURCE_DIR} / "kernels", name);
    REQUIRE(loaded);
    auto task = std::move(*loaded);
    keep_workloads(task, picks);
    auto result = (*made)->evaluate(
      task, make_candidate("b", task.baseline_source), 5);
    INFO(result.detail << result.build_log);
    CHECK(result.status == eval_status::passed);
    // Each family's instances of all first and all middle values.
    for (const auto& f : task.families)
      for (int pick = 0; pick < 2; ++pick) {
        param_map params;
        for (const auto& p : f.params)
          params[p.name] = p.values[pick == 0 ? 0 : p.values.size() / 2];
        auto source = render_template(f, params);
        REQUIRE(source);
        auto r = (*made)->evaluate(task, make_candidate(f.name, *source), 5);
        INFO(f.name << " pick " << pick << ": " << r.detail << r.build_log);
        CHECK(r.status == eval_status::passed);
        std::string label = f.name;
        for (const auto& [k, v] : params)
          label += " " + k + "=" + v;
        for (const auto& w : r.workloads)
          std::printf("%s %s, %s: median %.1f us, baseline %.1f us\n", name,
            label.c_str(), w.workload.c_str(), w.candidate_median_ns / 1e3,
            w.baseline_median_ns / 1e3);
        std::printf("%s %s: %s, geomean speedup %.2f\n", name, label.c_str(),
          to_string(r.status).c_str(), r.geomean_speedup);
      }
  }
}

int main(int argc, char** argv) {
  if (skip_without_cuda_gpu(argc, argv))
    return 77;
  return Catch::Session().run(argc, argv);
}
