// Specification of the GPU definition tasks where no GPU is needed:
// gemm_n4096_k4096 loads and the GPU devices accept it; its reference
// computes A·Bᵀ from fp16 inputs; its CUDA baseline, the cuBLAS expert
// (linked with -lcublas through expert_libs) and instances of its template
// families compile with nvcc for sm_90, the HIP baseline and templates with
// hipcc for gfx90a; the MLA and GQA decode, rmsnorm and softmax tasks load
// and their baselines and templates compile for both; and a GPU runner
// answers a definition request with a clear status.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>

#include <dlfcn.h>

#include "actors/agent/render.hpp"
#include "actors/protocol/error.hpp"
#include "devices/compiler.hpp"
#include "devices/gpu_runner/gpu_kind.hpp"
#include "devices/gpu_runner_client.hpp"
#include "devices/gpu_toolchain.hpp"
#include "devices/kinds/dtype.hpp"
#include "devices/rng.hpp"
#include "devices/subprocess.hpp"
#include "runtime/task_file.hpp"
#include "tests/devices/gpu_support.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

task_spec load(const std::string& name) {
  auto task = load_task(std::filesystem::path{EAT_SOURCE_DIR} / "kernels", name);
  INFO((task ? std::string{} : render(task.error())));
  REQUIRE(task);
  return std::move(*task);
}

/// True if the shared object at `path` exports `symbol` (nm -D).
bool exports(const std::string& path, const std::string& symbol) {
  auto run = run_captured({"nm", "-D", "--defined-only", path}, "", 60);
  return run && run->status.exited && run->status.code == 0
         && run->output.find(" T " + symbol) != std::string::npos;
}

/// Family `family`'s instance with the given parameter values.
std::string instance(const task_spec& task, const param_map& params,
  const std::string& family = "tiled") {
  for (const auto& f : task.families)
    if (f.name == family) {
      auto source = render_template(f, params);
      REQUIRE(source);
      return *source;
    }
  FAIL("no template family " << family);
  return {};
}

param_map wmma(const char* wm, const char* wn, const char* fm, const char* fn,
  const char* bk) {
  return {{"warps_m", wm}, {"warps_n", wn}, {"frags_m", fm},
    {"frags_n", fn}, {"block_k", bk}};
}

param_map dot(const char* rows, const char* cols, const char* warps,
  const char* vec) {
  return {{"rows", rows}, {"cols", cols}, {"warps", warps}, {"vec", vec}};
}

param_map tile(const char* bm, const char* bn, const char* bk, const char* tm,
  const char* tn) {
  return {{"block_m", bm}, {"block_n", bn}, {"block_k", bk},
    {"thread_m", tm}, {"thread_n", tn}};
}

} // namespace

TEST_CASE("gemm_n4096_k4096 loads as a CUDA definition task the GPU devices "
          "accept") {
  auto task = load("gemm_n4096_k4096");
  CHECK(task.kind == "definition");
  CHECK(task.backend == "cuda");
  CHECK(check_gpu_task(task).empty());
  CHECK(task.expert_libs == std::vector<std::string>{"cublas"});
  REQUIRE(task.workloads.size() == 6);
  std::vector<int64_t> ms;
  for (const auto& w : task.workloads) {
    ms.push_back(w.abi_axes.at(0));
    CHECK(w.abi_axes == std::vector<int64_t>{w.abi_axes[0], 4096, 4096});
    REQUIRE(w.inputs.size() == 2);
    CHECK(w.inputs[0].dtype == "float16");
    CHECK(w.inputs[1].shape == std::vector<int64_t>{4096, 4096});
    REQUIRE(w.outputs.size() == 1);
    CHECK(w.outputs[0].name == "C");
    CHECK(w.outputs[0].atol == 1e-2);
    CHECK(w.outputs[0].rtol == 1e-2);
    auto m = static_cast<double>(w.abi_axes[0]);
    CHECK(w.flops == 2 * m * 4096 * 4096);
    CHECK(w.bytes == 2 * (m * 4096 + 4096.0 * 4096 + m * 4096));
  }
  CHECK(ms == std::vector<int64_t>{1, 7, 16, 64, 128, 256});
  // Named after the one variable axis; the uuid is kept for traces.
  CHECK(task.workloads.front().name == "m1");
  CHECK(task.workloads.back().name == "m256");
  CHECK(task.workloads.front().uuid.substr(0, 8) == "e39649a6");
  auto hip = load("gemm_n4096_k4096_hip");
  CHECK(hip.backend == "hip");
  CHECK(hip.expert_source.empty());
  CHECK(check_gpu_task(hip).empty());
  CHECK(hip.definition == task.definition);
  // The HIP task's copies of the CUDA task's files must not drift apart.
  CHECK(hip.reference_source == task.reference_source);
  REQUIRE(hip.workloads.size() == task.workloads.size());
  for (size_t i = 0; i < hip.workloads.size(); ++i)
    CHECK(hip.workloads[i].abi_axes == task.workloads[i].abi_axes);
}

TEST_CASE("GPU devices refuse kinds without a GPU entry ABI") {
  auto task = load("gemm_n4096_k4096");
  task.kind = "softmax";
  CHECK_THAT(check_gpu_task(task), Catch::Contains("no GPU entry ABI"));
}

TEST_CASE("the gemm_n4096_k4096 reference computes A times B transposed from "
          "fp16 inputs") {
  auto dir = make_temp_dir();
  auto gxx = compiler::make("g++", dir.path().string(), 120);
  REQUIRE(gxx);
  auto task = load("gemm_n4096_k4096");
  auto so = gxx->compile(task.reference_source, {"-O2", "-std=c++17"},
    "reference.cpp");
  REQUIRE(so);
  REQUIRE(so->ok);
  void* handle = ::dlopen(so->so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  using ref_fn = void (*)(const void* const*, double* const*, const int64_t*);
  auto fn = reinterpret_cast<ref_fn>(::dlsym(handle, "eat_kernel_reference"));
  REQUIRE(fn != nullptr);
  const int64_t m = 3, n = 5, k = 37; // k: not a multiple of 8
  eat::devices::rng gen{5};
  std::vector<uint16_t> a(m * k), b(n * k);
  for (auto* v : {&a, &b})
    for (auto& x : *v)
      x = float_to_half(static_cast<float>(gen.uniform(-1, 1)));
  a[4] = 0x0003; // a subnormal: 3 * 2^-24
  std::vector<double> c(m * n);
  const void* in[] = {a.data(), b.data()};
  double* out[] = {c.data()};
  const int64_t axes[] = {m, n, k};
  fn(in, out, axes);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += static_cast<double>(half_to_float(a[i * k + p]))
             * half_to_float(b[j * k + p]);
      CHECK(c[i * n + j] == Approx(s).epsilon(1e-12).margin(1e-12));
    }
  ::dlclose(handle);
}

TEST_CASE("only the task's own expert links its vendor libraries") {
  auto task = load("gemm_n4096_k4096");
  auto expert = make_candidate("e", task.expert_source);
  CHECK(expert_link_flags("cuda", task, expert)
        == std::vector<std::string>{"-Xlinker", "--no-as-needed", "-lcublas"});
  CHECK(expert_link_flags("hip", task, expert)
        == std::vector<std::string>{"-Wl,--no-as-needed", "-lcublas"});
  CHECK(expert_link_flags("cuda", task, make_candidate("c", "// other"))
          .empty());
}

#if EAT_TEST_HAVE_CUDA
TEST_CASE("gemm_n4096_k4096's baseline, cuBLAS expert and template "
          "instances compile with nvcc for sm_90") {
  auto dir = make_temp_dir();
  auto tools = gpu_toolchain::make(
    "cuda", EAT_TEST_NVCC, "g++", {"-O3"}, dir.path().string(), 300);
  REQUIRE(tools);
  auto task = load("gemm_n4096_k4096");
  auto expert = tools->prepare(
    task, make_candidate("expert", task.expert_source), "sm_90");
  INFO(expert.detail << expert.build_log);
  REQUIRE(expert.status == eval_status::passed);
  CHECK(exports(expert.baseline_object, "eat_kernel"));
  CHECK(exports(expert.candidate_object, "eat_kernel"));
  CHECK(exports(expert.reference_object, "eat_kernel_reference"));
  auto ldd = run_captured({"ldd", expert.candidate_object}, "", 60);
  REQUIRE(ldd);
  CHECK_THAT(ldd->output, Catch::Contains("libcublas"));
  for (const auto& params : {tile("16", "32", "8", "1", "1"),
         tile("64", "64", "16", "4", "4"), tile("128", "128", "32", "8", "8")}) {
    auto out = tools->prepare(
      task, make_candidate("t", instance(task, params)), "sm_90");
    INFO(out.detail << out.build_log);
    CHECK(out.status == eval_status::passed);
    CHECK(exports(out.candidate_object, "eat_kernel"));
  }
  for (const auto& params :
       {wmma("1", "1", "1", "1", "16"), wmma("4", "2", "2", "4", "32")}) {
    auto out = tools->prepare(task,
      make_candidate("w", instance(task, params, "tensor_core")), "sm_90");
    INFO(out.detail << out.build_log);
    CHECK(out.status == eval_status::passed);
  }
  for (const auto& params : {dot("1", "1", "2", "2"), dot("8", "4", "8", "8"),
         dot("2", "2", "4", "4")}) {
    auto out = tools->prepare(task,
      make_candidate("d", instance(task, params, "warp_dot")), "sm_90");
    INFO(out.detail << out.build_log);
    CHECK(out.status == eval_status::passed);
    CHECK(exports(out.candidate_object, "eat_kernel"));
  }
  SECTION("an instance over 1024 threads is an invalid combination") {
    auto bad = tools->prepare(task,
      make_candidate("b", instance(task, tile("128", "128", "8", "1", "1"))),
      "sm_90");
    CHECK(bad.status == eval_status::compile_error);
    CHECK_THAT(bad.build_log, Catch::Contains("invalid combination"));
  }
  SECTION("tensor-core tiles over 48 KiB are an invalid combination") {
    auto bad = tools->prepare(task,
      make_candidate("w", instance(task, wmma("4", "4", "2", "2", "64"),
                            "tensor_core")),
      "sm_90");
    CHECK(bad.status == eval_status::compile_error);
    CHECK_THAT(bad.build_log, Catch::Contains("invalid combination"));
  }
}
#endif

#if EAT_TEST_HAVE_CUDA || EAT_TEST_HAVE_HIP
namespace {

/// The baseline of `task` compiles for `arch` and exports eat_kernel; each
/// family's instance of all first values (the default) compiles, and those
/// of all middle and all last values compile or stop as an invalid
/// combination.
void check_task_compiles(
  const task_spec& task, const gpu_toolchain& tools, const char* arch) {
  auto out
    = tools.prepare(task, make_candidate("b", task.baseline_source), arch);
  INFO(out.detail << out.build_log);
  CHECK(out.status == eval_status::passed);
  CHECK(exports(out.candidate_object, "eat_kernel"));
  for (const auto& f : task.families)
    for (int pick = 0; pick < 3; ++pick) {
      param_map params;
      for (const auto& p : f.params)
        params[p.name] = p.values[pick == 0   ? 0
                                  : pick == 1 ? p.values.size() / 2
                                              : p.values.size() - 1];
      auto inst = tools.prepare(
        task, make_candidate("t", instance(task, params, f.name)), arch);
      INFO(f.name << " pick " << pick << ": " << inst.detail
                  << inst.build_log);
      if (pick > 0 && inst.status == eval_status::compile_error)
        CHECK_THAT(inst.build_log, Catch::Contains("invalid combination:"));
      else
        CHECK(inst.status == eval_status::passed);
    }
}

/// A toolchain of `backend` with `compiler`, its cache in `dir`.
gpu_toolchain make_tools(const std::string& backend,
  const std::string& compiler, const scratch_dir& dir) {
  auto tools = gpu_toolchain::make(
    backend, compiler, "g++", {"-O3"}, dir.path().string(), 300);
  REQUIRE(tools);
  return std::move(*tools);
}

/// The CUDA or HIP MLA and GQA decode tasks load as their CPU tasks do and
/// their baselines and templates compile for `arch`.
void check_decode_tasks(
  const std::string& backend, const std::string& compiler, const char* arch) {
  auto dir = make_temp_dir();
  auto tools = make_tools(backend, compiler, dir);
  for (std::string name : {"mla_paged_decode_h16_ckv512_kpe64_ps1",
         "gqa_paged_decode_h32_kv4_d128_ps1"}) {
    INFO(name);
    auto task = load(name + "_" + backend);
    auto cpu = load(name);
    CHECK(task.backend == backend);
    CHECK(check_gpu_task(task).empty());
    CHECK(task.definition == cpu.definition);
    CHECK(task.reference_source == cpu.reference_source);
    REQUIRE(task.workloads.size() == cpu.workloads.size());
    for (size_t i = 0; i < task.workloads.size(); ++i) {
      CHECK(task.workloads[i].name == cpu.workloads[i].name);
      CHECK(task.workloads[i].abi_axes == cpu.workloads[i].abi_axes);
    }
    check_task_compiles(task, tools, arch);
  }
}

/// The CUDA or HIP memory-bound tasks (rmsnorm, softmax) load, the GPU devices accept
/// them, the HIP ones share the CUDA ones' definition and reference, and
/// their baselines and templates compile for `arch`.
void check_memory_bound_tasks(
  const std::string& backend, const std::string& compiler, const char* arch) {
  auto dir = make_temp_dir();
  auto tools = make_tools(backend, compiler, dir);
  for (std::string name : {"rmsnorm_h4096", "softmax"}) {
    INFO(name);
    auto task = load(name + "_" + backend);
    auto cuda = load(name + "_cuda");
    CHECK(task.backend == backend);
    CHECK(check_gpu_task(task).empty());
    CHECK(task.definition == cuda.definition);
    CHECK(task.reference_source == cuda.reference_source);
    CHECK(task.families.size() >= 2);
    check_task_compiles(task, tools, arch);
  }
}

} // namespace
#endif

#if EAT_TEST_HAVE_CUDA
TEST_CASE("the CUDA MLA and GQA decode tasks load as their CPU tasks do and "
          "their baselines and templates compile with nvcc for sm_90") {
  check_decode_tasks("cuda", EAT_TEST_NVCC, "sm_90");
}

TEST_CASE("the CUDA rmsnorm and softmax tasks load and their baselines and "
          "templates compile with nvcc for sm_90") {
  check_memory_bound_tasks("cuda", EAT_TEST_NVCC, "sm_90");
}
#endif

#if EAT_TEST_HAVE_HIP
TEST_CASE("the HIP MLA and GQA decode tasks load as their CPU tasks do and "
          "their baselines and templates compile with hipcc for gfx90a") {
  check_decode_tasks("hip", EAT_TEST_HIPCC, "gfx90a");
}

TEST_CASE("the HIP rmsnorm and softmax tasks load and their baselines and "
          "templates compile with hipcc for gfx90a") {
  check_memory_bound_tasks("hip", EAT_TEST_HIPCC, "gfx90a");
}

TEST_CASE("gemm_n4096_k4096_hip's baseline, tiled and warp_dot instances "
          "compile with hipcc for gfx90a") {
  auto dir = make_temp_dir();
  auto tools = gpu_toolchain::make(
    "hip", EAT_TEST_HIPCC, "g++", {"-O3"}, dir.path().string(), 300);
  REQUIRE(tools);
  auto task = load("gemm_n4096_k4096_hip");
  for (const auto& params :
       {tile("16", "32", "8", "1", "1"), tile("64", "64", "16", "4", "4")}) {
    auto out = tools->prepare(
      task, make_candidate("t", instance(task, params)), "gfx90a");
    INFO(out.detail << out.build_log);
    CHECK(out.status == eval_status::passed);
    CHECK(exports(out.baseline_object, "eat_kernel"));
    CHECK(exports(out.candidate_object, "eat_kernel"));
  }
  for (const auto& params : {dot("1", "1", "2", "2"), dot("8", "4", "8", "8")}) {
    auto out = tools->prepare(task,
      make_candidate("d", instance(task, params, "warp_dot")), "gfx90a");
    INFO(out.detail << out.build_log);
    CHECK(out.status == eval_status::passed);
    CHECK(exports(out.candidate_object, "eat_kernel"));
  }
}
#endif

TEST_CASE("a GPU runner answers a definition request with a clear status") {
  std::vector<std::pair<std::string, std::string>> runners;
#if EAT_TEST_HAVE_CUDA
  runners.emplace_back("cuda", EAT_CUDA_RUNNER_PATH);
#endif
#if EAT_TEST_HAVE_HIP
  runners.emplace_back("hip", EAT_HIP_RUNNER_PATH);
#endif
  auto task = load("gemm_n4096_k4096");
  for (const auto& [backend, path] : runners) {
    gpu_runner_request req;
    req.nonce = 0xdef;
    req.kind = task.kind;
    req.workloads = {task.workloads.front()};
    req.reference_so = "/nonexistent/reference.so";
    req.baseline_so = "/nonexistent/baseline.so";
    req.candidate_so = "/nonexistent/candidate.so";
    req.backend = backend;
    auto dir = make_temp_dir();
    auto out = run_gpu_runner({path, dir.path().string(), 120}, req);
    REQUIRE(out);
    REQUIRE(out->reply);
    INFO(backend << ": " << out->reply->detail);
    auto probe = probe_built(backend);
    if (probe.devices.empty()) {
      CHECK(out->reply->status == eval_status::runtime_error);
      CHECK_THAT(out->reply->detail, Catch::Contains("GPU 0 is unavailable"));
    } else {
      CHECK(out->reply->status == eval_status::rejected);
      CHECK_THAT(out->reply->detail, Catch::Contains("the task's reference"));
    }
  }
}
