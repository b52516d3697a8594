// The GPU tasks' CUDA and HIP kernels (decode, fp16 GEMM, sgemm), run on the
// CPU (tests/devices/cuda_on_cpu.hpp) through the CPU harness against the
// task's reference on small workloads: the logic of each baseline and template
// family is checked in CI, where no GPU is; the GPU hardware tests check them
// on a GPU. Also the emulation itself: barriers, shuffles, WMMA layouts,
// 64-lane wavefronts and a deadlock.

#include <filesystem>
#include <fstream>


#include <catch2/catch.hpp>

#include "actors/agent/render.hpp"
#include "actors/protocol/error.hpp"
#include "runtime/task_file.hpp"
#include "tests/devices/cuda_on_cpu.hpp"
#include "tests/devices/on_cpu_checks.hpp"
#include "tests/devices/small_tasks.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using test::check_file_passes;
using test::check_instances;
using test::evaluate_on_cpu;
using test::family_of;

namespace fs = std::filesystem;

namespace {

const fs::path kernels = fs::path{EAT_SOURCE_DIR} / "kernels";

/// The CUDA and the HIP task of MLA (`mla`) or GQA have template family
/// `family`; each of `instances` of it passes against the reference on 2
/// requests of 40 tokens in all (tiles of 8 and 32 end part-full) and on 1
/// request of 3 tokens (shorter than any tile, fewer than the warps).
void check_family(bool mla, const std::string& family,
  const std::vector<param_map>& instances) {
  const std::string name = mla ? "mla_paged_decode_h16_ckv512_kpe64_ps1"
                               : "gqa_paged_decode_h32_kv4_d128_ps1";
  auto dir = test::make_temp_dir();
  auto task = test::small_task(name,
    {test::decode_line(mla, 2, 40), test::decode_line(mla, 1, 3)}, dir.path());
  for (bool hip : {false, true}) {
    auto gpu = load_task(kernels, name + (hip ? "_hip" : "_cuda"));
    REQUIRE(gpu);
    check_instances(task, family_of(*gpu, family), instances, hip);
  }
}

/// The fp16 GEMM task (HIP with `hip`) as a CPU task on workloads M =
/// `ms` (N = K = 4096 are fixed): its reference and tolerances, and its
/// GPU baseline run on the CPU as the baseline.
task_spec gemm_on_cpu(
  bool hip, const std::vector<int>& ms, const fs::path& dir) {
  const std::string name = hip ? "gemm_n4096_k4096_hip" : "gemm_n4096_k4096";
  std::vector<std::string> lines;
  for (int m : ms)
    lines.push_back(
      R"({"definition": "gemm_n4096_k4096", "workload": {"axes": {"M": )"
      + std::to_string(m) + R"(}, "inputs": {"A": {"type": "random"}, )"
      + R"("B": {"type": "random"}}}})");
  return test::gpu_task_on_cpu(name, lines, dir, hip);
}

/// Each of `instances` of the CUDA and HIP GEMM tasks' family `family`
/// passes against the reference for M = 3.
void check_gemm_family(
  const std::string& family, const std::vector<param_map>& instances) {
  auto dir = test::make_temp_dir();
  for (bool hip : {false, true}) {
    auto task = gemm_on_cpu(hip, {3}, dir.path());
    check_instances(task, family_of(task, family), instances, hip);
  }
}

/// A CUDA source run on the CPU, compiled and loaded in this process:
/// callable as its CPU entry point eat_kernel(inputs, outputs, axes).
class loaded_kernel {
public:
  explicit loaded_kernel(const std::string& cu)
      : library_{test::cuda_on_cpu(cu)},
        entry_{reinterpret_cast<entry>(library_.symbol("eat_kernel"))} {
  }

  void operator()(
    const void* const* in, void* const* out, const int64_t* axes) const {
    entry_(in, out, axes);
  }

private:
  using entry = void (*)(const void* const*, void* const*, const int64_t*);
  test::loaded_library library_;
  entry entry_;
};

} // namespace

TEST_CASE("cuda_on_cpu runs barriers, shuffles and a grid like a GPU") {
  // Block sums by a shared-memory tree and by warp shuffles must agree
  // with the plain sum, for 3 blocks of 96 threads (3 warps).
  const std::string cu = R"(#include <cuda_runtime.h>
#include <cstdint>
namespace {
__global__ void sums(const float* x, float* out) {
  __shared__ float part[96];
  __shared__ float warps[3];
  const int t = threadIdx.x;
  const float v = x[blockIdx.x * 96 + t];
  part[t] = v;
  __syncthreads();
  if (t == 0) {
    float s = 0;
    for (int i = 0; i < 96; ++i) s += part[i];
    out[blockIdx.x * 2] = s;
  }
  float w = v;
  for (int o = 16; o > 0; o /= 2) w += __shfl_xor_sync(0xffffffffu, w, o);
  if (t % 32 == 0) warps[t / 32] = w;
  __syncthreads();
  if (t == 0) out[blockIdx.x * 2 + 1] = warps[0] + warps[1] + warps[2];
}
}
extern "C" int eat_kernel(const void* const* in, void* const* out,
                          const int64_t*, void* stream) {
  sums<<<3, 96, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(in[0]), static_cast<float*>(out[0]));
  return 0;
}
)";
  loaded_kernel fn{cu};
  std::vector<float> x(3 * 96);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i % 7) - 3.0f;
  std::vector<float> out(6, -1.0f);
  const void* in[] = {x.data()};
  void* outs[] = {out.data()};
  fn(in, outs, nullptr);
  for (int b = 0; b < 3; ++b) {
    float s = 0;
    for (int i = 0; i < 96; ++i)
      s += x[static_cast<size_t>(b * 96 + i)];
    CHECK(out[static_cast<size_t>(b * 2)] == s);
    CHECK(out[static_cast<size_t>(b * 2 + 1)] == s);
  }
}

TEST_CASE("cuda_on_cpu shows a shared-memory read that lacks its barrier") {
  // Each thread reads its left neighbour's value from shared memory; in
  // threads' index order the neighbour has always written it already, but
  // warps run in no fixed order on a GPU, and the reversed order of odd
  // blocks shows the read before the write without __syncthreads.
  auto kernel = [](const std::string& barrier) {
    return R"(#include <cuda_runtime.h>
#include <cstdint>
__global__ void left(const float* x, float* out) {
  __shared__ float v[64];
  const int t = threadIdx.x;
  v[t] = x[blockIdx.x * 64 + t];
  )" + barrier + R"(
  out[blockIdx.x * 64 + t] = t > 0 ? v[t - 1] : 0.0f;
}
extern "C" int eat_kernel(const void* const* in, void* const* out,
                          const int64_t*, void* stream) {
  left<<<2, 64, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(in[0]), static_cast<float*>(out[0]));
  return 0;
}
)";
  };
  std::vector<float> x(128);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i + 1);
  const void* in[] = {x.data()};
  auto wrong = [&](const std::string& barrier) {
    loaded_kernel fn{kernel(barrier)};
    std::vector<float> out(128, -1.0f);
    void* outs[] = {out.data()};
    fn(in, outs, nullptr);
    int bad = 0;
    for (size_t i = 0; i < out.size(); ++i)
      bad += out[i] != (i % 64 == 0 ? 0.0f : x[i - 1]);
    return bad;
  };
  CHECK(wrong("__syncthreads();") == 0);
  CHECK(wrong("") > 0);
}

TEST_CASE("cuda_on_cpu rewrites launches of template kernels and rejects "
          "what it cannot run") {
  auto cpu = test::cuda_on_cpu(R"(#include <cuda_runtime.h>
template <int n> __global__ void k(int* x) { x[threadIdx.x] = n; }
extern "C" int eat_kernel(const void* const*, void* const* out,
                          const int64_t*, void* s) {
  k<4><<<dim3(1), dim3(32), 0, static_cast<cudaStream_t>(s)>>>(
      static_cast<int*>(out[0]));
  return 0;
}
)");
  CHECK(cpu.find("eat_emu::launcher(dim3(1), dim3(32), 0, "
                 "static_cast<cudaStream_t>(s))(k<4>, ")
        != std::string::npos);
  auto body = cpu.substr(cpu.find("// The kernel's source follows."));
  CHECK(body.find("<<<") == std::string::npos);
  CHECK_THROWS_WITH(test::cuda_on_cpu("#include <cuda_fp8.h>\nextern \"C\" "
                                      "int eat_kernel(){}"),
    Catch::Contains("header it cannot stand in for"));
  CHECK_THROWS_WITH(
    test::cuda_on_cpu("int main() {}"), Catch::Contains("eat_kernel"));
}

TEST_CASE("cuda_on_cpu stops a block whose barriers cannot release") {
  // Odd threads wait for the block, even ones for their warp: on a GPU a
  // hang or undefined behaviour, here an abort the harness reports.
  auto dir = test::make_temp_dir();
  auto task = test::small_task("mla_paged_decode_h16_ckv512_kpe64_ps1",
    {test::decode_line(true, 1, 3)}, dir.path());
  auto r = evaluate_on_cpu(task, R"(#include <cuda_runtime.h>
#include <cstdint>
__global__ void stuck() {
  if (threadIdx.x % 2) __syncthreads(); else __syncwarp();
}
extern "C" int eat_kernel(const void* const*, void* const*, const int64_t*,
                          void* s) {
  stuck<<<1, 64, 0, static_cast<cudaStream_t>(s)>>>();
  return 0;
}
)");
  CHECK(r.status == eval_status::runtime_error);
  CHECK(r.detail.find("deadlocks") != std::string::npos);
}

TEST_CASE("a CUDA MLA kernel with a wrong softmax fails on the CPU") {
  auto dir = test::make_temp_dir();
  auto task = test::small_task("mla_paged_decode_h16_ckv512_kpe64_ps1",
    {test::decode_line(true, 2, 7)}, dir.path());
  auto cu = test::read_source(
    "kernels/mla_paged_decode_h16_ckv512_kpe64_ps1_cuda/baseline.cu");
  const std::string exact = "const float p = expf(s - next);";
  auto at = cu.find(exact);
  REQUIRE(at != std::string::npos);
  cu.replace(at, exact.size(), "const float p = 1.01f * expf(s - next);");
  auto r = evaluate_on_cpu(task, cu);
  CHECK(r.status == eval_status::incorrect);
  CHECK(r.detail.find("lse") != std::string::npos);
}

TEST_CASE("kv_shared instances of the CUDA and HIP MLA tasks agree with the "
          "reference when run on the CPU") {
  check_family(true, "kv_shared",
    {{{"heads", "16"}, {"tile", "16"}, {"warps", "4"}, {"splits", "1"}},
      {{"heads", "4"}, {"tile", "32"}, {"warps", "8"}, {"splits", "4"}},
      // More splits than the 3-token request has tokens: empty splits.
      {{"heads", "1"}, {"tile", "8"}, {"warps", "4"}, {"splits", "16"}}});
}

TEST_CASE("warp_split instances of the CUDA and HIP MLA tasks agree with "
          "the reference when run on the CPU") {
  check_family(true, "warp_split",
    {{{"heads", "1"}, {"warps", "2"}}, {{"heads", "4"}, {"warps", "8"}},
      {{"heads", "2"}, {"warps", "16"}}});
}

TEST_CASE("warp_split instances of the CUDA and HIP GQA tasks agree with "
          "the reference when run on the CPU") {
  check_family(false, "warp_split",
    {{{"heads", "1"}, {"warps", "2"}}, {{"heads", "8"}, {"warps", "4"}},
      {{"heads", "2"}, {"warps", "16"}}});
}

TEST_CASE("group_shared instances of the CUDA and HIP GQA tasks agree with "
          "the reference when run on the CPU") {
  check_family(false, "group_shared",
    {{{"heads", "8"}, {"tile", "16"}, {"warps", "4"}, {"lanes", "8"}},
      {{"heads", "2"}, {"tile", "32"}, {"warps", "8"}, {"lanes", "32"}},
      {{"heads", "1"}, {"tile", "8"}, {"warps", "4"}, {"lanes", "16"}}});
}

TEST_CASE("the CUDA and HIP MLA and GQA decode baselines agree with their "
          "references when run on the CPU (HIP with 64-lane wavefronts)") {
  auto dir = test::make_temp_dir();
  for (bool mla : {true, false}) {
    std::string name = mla ? "mla_paged_decode_h16_ckv512_kpe64_ps1"
                           : "gqa_paged_decode_h32_kv4_d128_ps1";
    auto task = test::small_task(name,
      {test::decode_line(mla, 1, 4), test::decode_line(mla, 3, 13)},
      dir.path());
    for (bool hip : {false, true})
      check_file_passes(task,
        "kernels/" + name + (hip ? "_hip/baseline.hip" : "_cuda/baseline.cu"),
        hip);
  }
}

TEST_CASE("the CUDA and HIP fp16 GEMM baselines agree with their reference "
          "when run on the CPU") {
  auto dir = test::make_temp_dir();
  // The baseline as a candidate, against itself as the baseline (which
  // the harness first checks against the reference).
  for (bool hip : {false, true})
    check_file_passes(gemm_on_cpu(hip, {1, 5}, dir.path()),
      hip ? "kernels/gemm_n4096_k4096_hip/baseline.hip"
          : "kernels/gemm_n4096_k4096/baseline.cu",
      hip);
}

TEST_CASE("tiled instances of the CUDA and HIP fp16 GEMM tasks agree with "
          "the reference when run on the CPU") {
  check_gemm_family("tiled",
    {{{"block_m", "64"}, {"block_n", "128"}, {"block_k", "32"},
        {"thread_m", "4"}, {"thread_n", "8"}},
      {{"block_m", "32"}, {"block_n", "64"}, {"block_k", "16"},
        {"thread_m", "2"}, {"thread_n", "4"}}});
}

TEST_CASE("warp_dot instances of the CUDA and HIP fp16 GEMM tasks agree "
          "with the reference when run on the CPU (HIP with 64-lane "
          "wavefronts)") {
  check_gemm_family("warp_dot",
    {{{"rows", "4"}, {"cols", "2"}, {"warps", "8"}, {"vec", "8"}},
      {{"rows", "8"}, {"cols", "4"}, {"warps", "4"}, {"vec", "4"}}});
}

TEST_CASE("a HIP GEMM whose warp sums stop at 32 lanes fails on the CPU's "
          "64-lane wavefronts") {
  auto dir = test::make_temp_dir();
  auto task = gemm_on_cpu(true, {3}, dir.path());
  auto source = render_template(family_of(task, "warp_dot"),
    {{"rows", "4"}, {"cols", "2"}, {"warps", "8"}, {"vec", "8"}});
  REQUIRE(source);
  // A reduction written for CUDA's 32-lane warps.
  const std::string wave64 = "for (int offset = lanes / 2;";
  auto at = source->find(wave64);
  REQUIRE(at != std::string::npos);
  source->replace(at, wave64.size(), "for (int offset = 16;");
  auto r = evaluate_on_cpu(task, *source, true);
  INFO(r.detail);
  CHECK(r.status == eval_status::incorrect);
  CHECK(r.detail.find("C[0][0]") != std::string::npos);
}

TEST_CASE("the CUDA and HIP sgemm baselines and tiled instances agree with "
          "the CPU sgemm task's reference when run on the CPU") {
  auto task = load_task(kernels, "sgemm");
  REQUIRE(task);
  // The two smaller workloads: 128 x 128 x 128, and 200 x 136 x 72, which
  // leaves every tile size part-full.
  task->workloads.erase(task->workloads.begin() + 1);
  REQUIRE(task->workloads.size() == 2);
  REQUIRE(task->workloads[1].name == "m200_n136_k72");
  for (bool hip : {false, true}) {
    const std::string name = hip ? "sgemm_hip" : "sgemm_cuda";
    auto gpu = load_task(kernels, name);
    REQUIRE(gpu);
    check_file_passes(*task,
      "kernels/" + name + (hip ? "/baseline.hip" : "/baseline.cu"), hip);
    check_instances(*task, family_of(*gpu, "tiled"),
      {{{"block_m", "64"}, {"block_n", "64"}, {"block_k", "16"},
         {"thread_m", "4"}, {"thread_n", "4"}, {"unroll", "2"}},
        {{"block_m", "32"}, {"block_n", "128"}, {"block_k", "8"},
          {"thread_m", "2"}, {"thread_n", "8"}, {"unroll", "4"}}},
      hip);
  }
}

TEST_CASE("tensor_core instances of the CUDA fp16 GEMM task agree with the "
          "reference when run on the CPU (WMMA shared out lane by lane)") {
  auto dir = test::make_temp_dir();
  auto task = gemm_on_cpu(false, {3}, dir.path());
  const auto& family = family_of(task, "tensor_core");
  check_instances(task, family,
    {{{"warps_m", "1"}, {"warps_n", "1"}, {"frags_m", "1"}, {"frags_n", "1"},
       {"block_k", "16"}},
      {{"warps_m", "2"}, {"warps_n", "2"}, {"frags_m", "2"},
        {"frags_n", "1"}, {"block_k", "32"}},
      {{"warps_m", "1"}, {"warps_n", "4"}, {"frags_m", "1"},
        {"frags_n", "2"}, {"block_k", "64"}}},
    false);
  SECTION("and one that reads B's tiles in the wrong layout fails") {
    auto source = render_template(family,
      {{"warps_m", "1"}, {"warps_n", "1"}, {"frags_m", "1"},
        {"frags_n", "1"}, {"block_k", "16"}});
    REQUIRE(source);
    const std::string b = "16, 16, 16, __half, wmma::col_major>";
    auto at = source->find(b);
    REQUIRE(at != std::string::npos);
    source->replace(at, b.size(), "16, 16, 16, __half, wmma::row_major>");
    auto r = evaluate_on_cpu(task, *source);
    INFO(r.detail << r.build_log);
    CHECK(r.status == eval_status::incorrect);
  }
}
