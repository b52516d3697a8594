// Specification of the CUDA and HIP devices, run whole on the CPU
// (docs/harness.md, "A GPU device on the CPU"): the real GPU device
// (devices/gpu_device.hpp) with its toolchain, runner protocol and scoring,
// given eat-test-nvcc-on-cpu as its compiler (kernels turned into C++ that
// runs on the CPU, tests/devices/cuda_on_cpu.hpp) and a GPU runner whose
// device memory is host memory (tests/devices/runner_on_cpu.cpp). What the
// GPU hardware tests (gpu_hw_test.cpp) check on a GPU, checked here in CI
// for both backends: the sgemm baseline and a tiled instance pass, and so do
// the MLA and GQA decode baselines and an instance of each of their
// families (bf16 inputs, page tables, a scalar: the definition kind's
// device buffers); wrong kernels are caught, a crashing or hanging runner is
// reported and the device goes on, the runner refuses a GPU that is not the
// device's, run by root it loads kernel code as run_as, in network and PID
// namespaces of its own, and run by another user it makes them in a user
// namespace of its own.

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <pwd.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "actors/agent/render.hpp"
#include "actors/protocol/error.hpp"
#include "devices/gpu_device.hpp"
#include "tests/devices/gpu_support.hpp"
#include "tests/devices/small_tasks.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// The GPU the runners on the CPU open (tests/devices/host_gpu_api.hpp).
gpu_info host_gpu(const std::string& backend) {
  gpu_info g;
  g.backend = backend;
  g.index = 0;
  g.name = "host memory";
  g.arch = backend == "cuda" ? "sm_90" : "gfx90a";
  g.uuid = "FAKE-0";
  g.memory_bytes = uint64_t{1} << 30;
  return g;
}

/// Options of a device of `backend` on the CPU.
gpu_options options_on_cpu(
  const std::string& backend, const scratch_dir& dir, double eval_timeout_s) {
  auto opts = quick_gpu_options(backend, dir);
  opts.compiler = EAT_TEST_NVCC_ON_CPU;
  // The stand-in compiler reads its prelude from the source tree, which
  // confined compiles may not, unless told (docs/config.md).
  ::setenv("EAT_COMPILE_PATHS", EAT_SOURCE_DIR "/tests/devices/cuda_on_cpu", 1);
  opts.runner_path = backend == "cuda" ? EAT_TEST_CUDA_RUNNER_ON_CPU
                                       : EAT_TEST_HIP_RUNNER_ON_CPU;
  opts.eval_timeout_s = eval_timeout_s;
  // No bandwidth probe on the CPU; peaks no emulated kernel comes near.
  opts.peak_flops_override = 1e15;
  opts.peak_bw_override = 1e13;
  return opts;
}

/// A device of `backend` on the CPU; `uuid` is the GPU it believes it has.
std::unique_ptr<device> device_on_cpu(const std::string& backend,
  const scratch_dir& dir, double eval_timeout_s = 120,
  const std::string& uuid = "FAKE-0", const std::string& run_as = "nobody") {
  auto opts = options_on_cpu(backend, dir, eval_timeout_s);
  opts.run_as = run_as;
  auto gpu = host_gpu(backend);
  gpu.uuid = uuid;
  auto made = make_gpu_device_for(
    backend + "0", std::move(gpu), "host runtime", std::move(opts));
  INFO((made ? std::string{} : render(made.error())));
  REQUIRE(made);
  return std::move(*made);
}

/// Small workloads: the emulated threads are fibers on one core.
task_spec small_sgemm(const std::string& backend) {
  return gpu_sgemm_task(
    backend, {gemm_workload(64, 48, 40), gemm_workload(37, 29, 23)});
}

eval_result evaluate(device& dev, const task_spec& task,
  const std::string& source, uint64_t seed = 11) {
  return dev.evaluate(task, make_candidate("c", source), seed);
}

void check_timed(const eval_result& r) {
  INFO(r.detail << r.build_log);
  REQUIRE(r.status == eval_status::passed);
  REQUIRE(r.workloads.size() == 2);
  for (const auto& w : r.workloads) {
    CHECK(w.baseline_median_ns > 0);
    CHECK(w.candidate_median_ns > 0);
    CHECK(w.samples > 0);
  }
  CHECK(r.geomean_speedup > 0);
}

/// The MLA (`mla`) or GQA decode task of `backend` on 2 requests of 40
/// tokens and 1 of 3: its baseline and the instance `params` of each
/// family named in `instances` pass on a device of `backend` on the CPU.
void check_decode(const std::string& backend, bool mla,
  const std::map<std::string, param_map>& instances) {
  auto dir = make_temp_dir();
  auto name = std::string{mla ? "mla_paged_decode_h16_ckv512_kpe64_ps1_"
                              : "gqa_paged_decode_h32_kv4_d128_ps1_"}
              + backend;
  auto task = small_task(
    name, {decode_line(mla, 2, 40), decode_line(mla, 1, 3)}, dir.path());
  auto dev = device_on_cpu(backend, dir);
  INFO(name);
  check_timed(evaluate(*dev, task, task.baseline_source));
  REQUIRE(task.families.size() == instances.size());
  for (const auto& family : task.families) {
    INFO(family.name);
    REQUIRE(instances.count(family.name) == 1);
    auto source = render_template(family, instances.at(family.name));
    REQUIRE(source);
    check_timed(evaluate(*dev, task, *source));
  }
}

} // namespace

TEST_CASE("a CUDA device on the CPU passes sgemm_cuda's baseline and a tiled "
          "instance through its compiler, runner and scoring") {
  auto dir = make_temp_dir();
  auto dev = device_on_cpu("cuda", dir);
  CHECK(dev->caps().kind == "cuda");
  CHECK(dev->caps().identity == "FAKE-0");
  CHECK_THAT(dev->description(), Catch::Contains("release 0.0"));
  auto task = small_sgemm("cuda");
  auto base = evaluate(*dev, task, task.baseline_source);
  check_timed(base);
  CHECK_THAT(base.compiler, Catch::Contains("-arch=sm_90a"));
  CHECK_THAT(base.method, Catch::Contains("cudaEvent"));
  CHECK_THAT(base.method, Catch::Contains("L2 flush 64 MiB"));
  CHECK_THAT(base.method, Catch::Contains("before timing: host clocks"));
  check_timed(
    evaluate(*dev, task, gpu_tiled_source("cuda", {32, 32, 8, 2, 2, 2})));
}

TEST_CASE("a HIP device on the CPU passes sgemm_hip's baseline and a tiled "
          "instance on 64-lane wavefronts") {
  auto dir = make_temp_dir();
  auto dev = device_on_cpu("hip", dir);
  CHECK(dev->caps().kind == "hip");
  auto task = small_sgemm("hip");
  auto base = evaluate(*dev, task, task.baseline_source);
  check_timed(base);
  CHECK_THAT(base.compiler, Catch::Contains("--offload-arch=gfx90a"));
  CHECK_THAT(base.method, Catch::Contains("hipEvent"));
  check_timed(
    evaluate(*dev, task, gpu_tiled_source("hip", {32, 32, 8, 2, 2, 2})));
}

TEST_CASE("a GPU device on the CPU reports wrong kernels precisely") {
  auto dir = make_temp_dir();
  auto dev = device_on_cpu("cuda", dir);
  auto task = small_sgemm("cuda");
  SECTION("a wrong result is incorrect") {
    auto r
      = evaluate(*dev, task, cuda_gemm_kernel("c[i * n + j] = sum + 0.01f;"));
    INFO(r.detail);
    CHECK(r.status == eval_status::incorrect);
    CHECK_THAT(r.detail, Catch::Contains("expected"));
  }
  SECTION("a write past the output is caught") {
    auto r = evaluate(*dev, task,
      cuda_gemm_kernel("c[i * n + j] = sum; "
                       "if (i == m - 1 && j == n - 1) c[m * n + 7] = 1.0f;"));
    INFO(r.detail);
    CHECK(r.status == eval_status::incorrect);
    CHECK_THAT(r.detail, Catch::Contains("outside its output"));
  }
  SECTION("source that does not compile is a compile error with the log") {
    auto r = evaluate(*dev, task, cuda_gemm_kernel("c[i * n + j] = sum +;"));
    CHECK(r.status == eval_status::compile_error);
    CHECK_THAT(r.build_log, Catch::Contains("error"));
  }
  SECTION("a task of the other backend is rejected before compiling") {
    auto r = evaluate(*dev, small_sgemm("hip"), task.baseline_source);
    CHECK(r.status == eval_status::rejected);
    CHECK_THAT(r.detail, Catch::Contains("backend 'hip'"));
  }
}

TEST_CASE("a GPU device on the CPU catches a kernel that errs by 1.5 times "
          "the tolerance in its timed calls only") {
  // From its 7th call on (past the correctness phase's 6 calls on one
  // workload) every element is off by 1.5 times sgemm_cuda's tolerance
  // (atol 5e-4, rtol 1e-4): within the twice the tolerance allowed against
  // the baseline's outputs, outside the tolerance against the reference.
  auto sloppy = R"(#include <cstdint>
#include <cuda_runtime.h>
__global__ void g(const float* a, const float* b, float* c, int64_t m,
                  int64_t n, int64_t k, bool sloppy) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t i = blockIdx.y * int64_t{blockDim.y} + threadIdx.y;
  if (i >= m || j >= n) return;
  float sum = 0.0f;
  for (int64_t p = 0; p < k; ++p) sum += a[i * k + p] * b[p * n + j];
  if (sloppy) sum += 1.5f * (5e-4f + 1e-4f * fabsf(sum));
  c[i * n + j] = sum;
}
extern "C" int eat_gemm(const float* a, const float* b, float* c, int64_t m,
                        int64_t n, int64_t k, void* stream) {
  static int calls = 0;
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (m + 15) / 16);
  g<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(a, b, c, m, n, k,
                                                           ++calls > 6);
  return static_cast<int>(cudaGetLastError());
}
)";
  auto dir = make_temp_dir();
  auto dev = device_on_cpu("cuda", dir);
  auto task = gpu_sgemm_task("cuda", {gemm_workload(64, 48, 40)});
  auto r = evaluate(*dev, task, sloppy);
  INFO(r.detail << r.build_log);
  CHECK(r.status == eval_status::incorrect);
  CHECK_THAT(r.detail, Catch::Contains("timed calls: timed output "));
  CHECK_THAT(
    r.detail, Catch::Contains("compared with the reference after the timing"));
}

TEST_CASE("a GPU device on the CPU catches a kernel that launches its work "
          "from a thread that ends within the call") {
  // Such a thread, left running past the call, could launch work into
  // the baseline's timed call and end before the harness counts threads
  // after the round; the PIDs its namespace gave show that it was there.
  // The checks' calls pass: a thread that ends within a call is no threat
  // to them.
  auto threaded = cuda_gemm_kernel_from_thread("c[i * n + j] = sum;");
  auto dir = make_temp_dir();
  auto dev = device_on_cpu("cuda", dir);
  auto task = gpu_sgemm_task("cuda", {gemm_workload(64, 48, 40)});
  auto r = evaluate(*dev, task, threaded);
  INFO(r.detail << r.build_log << r.method);
  if (r.method.find("own PID namespace") == std::string::npos) {
    WARN("the runner has no PID namespace of its own here, so the PIDs it "
         "gave are not counted");
    return;
  }
  CHECK(r.status == eval_status::rejected);
  CHECK_THAT(r.detail,
    Catch::Contains("timing: hidden threads: 1 thread(s) or process(es) "
                    "started and ended within a timed round"));
}

TEST_CASE("a GPU device on the CPU survives a runner that crashes or hangs") {
  auto dir = make_temp_dir();
  // The baseline's checks and samples take about a second here.
  auto dev = device_on_cpu("cuda", dir, 10);
  auto task = small_sgemm("cuda");
  auto wild = evaluate(*dev, task,
    cuda_gemm_kernel("c[i * n + j] = sum; "
                     "if (i == 0 && j == 0) c[int64_t{1} << 40] = 1.0f;"));
  INFO(wild.detail);
  CHECK(wild.status == eval_status::runtime_error);
  CHECK_THAT(wild.detail, Catch::Contains("SIGSEGV"));
  auto spin = evaluate(*dev, task,
    cuda_gemm_kernel("if (i == 0 && j == 0) { volatile int x = 0; "
                     "while (x == 0) {} } c[i * n + j] = sum;"));
  INFO(spin.detail);
  CHECK(spin.status == eval_status::timeout);
  auto next = evaluate(*dev, task, task.baseline_source, 12);
  INFO(next.detail);
  CHECK(next.status == eval_status::passed);
}

TEST_CASE("a GPU runner that aborts is a runtime error that quotes what it "
          "printed last") {
  // On an AMD GPU a kernel's memory fault does not come back through
  // hipDeviceSynchronize: the runtime (ROCr) prints the fault on stderr
  // and aborts the process. The detail carries both; here the kernel
  // prints ROCr's line itself.
  auto dir = make_temp_dir();
  auto dev = device_on_cpu("cuda", dir, 10);
  auto task = small_sgemm("cuda");
  auto fault = evaluate(*dev, task,
    "#include <cstdio>\n#include <cstdlib>\n"
      + cuda_gemm_kernel("c[i * n + j] = sum; if (i == 0 && j == 0) { "
                         "std::fprintf(stderr, \"Memory access fault by GPU "
                         "node-2 (Agent handle: 0x55d0) on address 0x7f00. "
                         "Reason: Page not present or supervisor "
                         "privilege.\\n\"); std::abort(); }"));
  INFO(fault.detail);
  CHECK(fault.status == eval_status::runtime_error);
  CHECK_THAT(fault.detail, Catch::Contains("SIGABRT")
                             && Catch::Contains("stderr: Memory access fault "
                                                "by GPU node-2")
                             && Catch::Contains("Reason: Page not present"));
}

TEST_CASE("a GPU runner refuses to evaluate on a GPU that is not the "
          "device's") {
  auto dir = make_temp_dir();
  auto dev = device_on_cpu("cuda", dir, 120, "GPU-elsewhere");
  auto task = small_sgemm("cuda");
  auto r = evaluate(*dev, task, task.baseline_source);
  INFO(r.detail);
  CHECK(r.status == eval_status::runtime_error);
  CHECK_THAT(r.detail, Catch::Contains("FAKE-0"));
  CHECK_THAT(r.detail, Catch::Contains("GPU-elsewhere"));
}

namespace {

/// Sets ("NAME=value") or removes ("NAME") environment variables for one
/// scope, restoring them at its end; a GPU runner started meanwhile
/// inherits them.
class scoped_environment {
public:
  explicit scoped_environment(const std::vector<std::string>& vars) {
    for (const auto& v : vars) {
      auto eq = v.find('=');
      auto name = v.substr(0, eq);
      const char* old = ::getenv(name.c_str());
      saved_.emplace_back(
        name, old == nullptr ? std::nullopt : std::optional<std::string>{old});
      if (eq == std::string::npos)
        ::unsetenv(name.c_str());
      else
        ::setenv(name.c_str(), v.substr(eq + 1).c_str(), 1);
    }
  }
  ~scoped_environment() {
    for (const auto& [name, old] : saved_)
      if (old)
        ::setenv(name.c_str(), old->c_str(), 1);
      else
        ::unsetenv(name.c_str());
  }
  scoped_environment(const scoped_environment&) = delete;
  scoped_environment& operator=(const scoped_environment&) = delete;

private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

/// A device of `backend` on fake GPU `index` of those the runtime shows,
/// which must be "FAKE-<fake>".
std::unique_ptr<device> device_on_fake_gpu(const std::string& backend,
  const scratch_dir& dir, int index, int fake, bool only_its_gpu = true) {
  auto opts = options_on_cpu(backend, dir, 120);
  opts.only_its_gpu = only_its_gpu;
  auto gpu = host_gpu(backend);
  gpu.index = index;
  gpu.uuid = "FAKE-" + std::to_string(fake);
  auto made = make_gpu_device_for(backend + std::to_string(index),
    std::move(gpu), "host runtime", std::move(opts));
  INFO((made ? std::string{} : render(made.error())));
  REQUIRE(made);
  return std::move(*made);
}

} // namespace

TEST_CASE("a GPU runner sees only its device's GPU of the several the "
          "machine has") {
  // The runtime on the CPU shows two fake GPUs, FAKE-0 and FAKE-1, and
  // honours the visible-devices variables as CUDA and HIP do.
  scoped_environment two_gpus{
    {"EAT_TEST_GPUS=2", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"}};
  auto dir = make_temp_dir();
  auto passes_on
    = [&](device& dev, const std::string& backend, const std::string& seen) {
        auto task = small_sgemm(backend);
        auto r = evaluate(dev, task, task.baseline_source);
        check_timed(r);
        CHECK_THAT(r.method, Catch::Contains(seen));
      };
  SECTION("a CUDA device on the second GPU") {
    auto dev = device_on_fake_gpu("cuda", dir, 1, 1);
    passes_on(
      *dev, "cuda", "kernel code saw only its GPU (CUDA_VISIBLE_DEVICES=1)");
  }
  SECTION("a HIP device on the first GPU; CUDA_VISIBLE_DEVICES, which HIP "
          "also reads, is not passed on") {
    scoped_environment cuda_list{{"CUDA_VISIBLE_DEVICES=1,0"}};
    // The parent's GPU 1 is fake GPU 0.
    auto dev = device_on_fake_gpu("hip", dir, 1, 0);
    passes_on(
      *dev, "hip", "kernel code saw only its GPU (HIP_VISIBLE_DEVICES=0)");
  }
  SECTION("with only_its_gpu off, kernel code sees both") {
    auto dev = device_on_fake_gpu("cuda", dir, 1, 1, false);
    passes_on(*dev, "cuda", "kernel code saw 2 GPUs");
  }
  SECTION("a runtime that ignores the variable is refused, not timed on "
          "another GPU") {
    scoped_environment see_all{{"EAT_TEST_GPUS_SEE_ALL=1"}};
    auto dev = device_on_fake_gpu("cuda", dir, 1, 1);
    auto task = small_sgemm("cuda");
    auto r = evaluate(*dev, task, task.baseline_source);
    INFO(r.detail);
    CHECK(r.status == eval_status::runtime_error);
    CHECK_THAT(r.detail, Catch::Contains("shows this runner 2 GPUs")
                           && Catch::Contains("only FAKE-1"));
  }
}

TEST_CASE("a GPU device whose GPU is missing from the parent's "
          "CUDA_VISIBLE_DEVICES is not made") {
  scoped_environment list{{"CUDA_VISIBLE_DEVICES=0"}};
  auto dir = make_temp_dir();
  auto gpu = host_gpu("cuda");
  gpu.index = 1;
  auto made = make_gpu_device_for(
    "cuda1", std::move(gpu), "host runtime", options_on_cpu("cuda", dir, 120));
  REQUIRE_FALSE(made);
  CHECK_THAT(render(made.error()),
    Catch::Contains("cuda device cuda1: ")
      && Catch::Contains("CUDA_VISIBLE_DEVICES=0 has no entry for GPU 1"));
}

TEST_CASE("run by root, a GPU runner loads kernel code as run_as, after the "
          "runtime has opened the GPU as root") {
  auto dir = make_temp_dir();
  auto task = small_sgemm("cuda");
  auto as_nobody
    = evaluate(*device_on_cpu("cuda", dir), task, task.baseline_source);
  check_timed(as_nobody);
  auto as_root = evaluate(
    *device_on_cpu("cuda", dir, 120, "FAKE-0", ""), task, task.baseline_source);
  check_timed(as_root);
  if (::geteuid() != 0) {
    WARN("not root: the runner keeps the test's user");
    auto own = "; kernel code run as uid " + std::to_string(::getuid());
    CHECK_THAT(as_nobody.method, Catch::Contains(own));
    CHECK_THAT(as_root.method, Catch::Contains(own));
    return;
  }
  const passwd* nobody = ::getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  CHECK_THAT(as_nobody.method,
    Catch::Contains(
      "; kernel code run as uid " + std::to_string(nobody->pw_uid)));
  CHECK_THAT(as_root.method, Catch::Contains("; kernel code run as root"));
  // Root opened the GPU in both (tests/devices/host_gpu_api.hpp).
  CHECK_THAT(as_nobody.method, Catch::Contains("opened by uid 0"));
  CHECK_THAT(as_root.method, Catch::Contains("opened by uid 0"));
  // Root makes the namespaces; the method line says so, as the CPU's does.
  CHECK_THAT(as_nobody.method,
    Catch::Contains("; network isolated; kernel processes in their own PID "
                    "namespace; tasks capped by "));
}

TEST_CASE("run by a user that is not root, a GPU runner isolates kernel "
          "code in a user namespace of its own, unless user_namespace is "
          "off") {
  auto dir = make_temp_dir();
  check_user_namespace_isolation(
    host_gpu("cuda"), options_on_cpu("cuda", dir, 120), small_sgemm("cuda"));
}

TEST_CASE("a GPU device run by root names an unknown run_as user") {
  auto dir = make_temp_dir();
  auto opts = options_on_cpu("cuda", dir, 120);
  opts.run_as = "no-such-user-of-eat";
  auto made = make_gpu_device_for(
    "cuda0", host_gpu("cuda"), "host runtime", std::move(opts));
  if (::geteuid() != 0) {
    CHECK(made); // other users cannot switch: run_as is ignored
    return;
  }
  REQUIRE(!made);
  CHECK_THAT(render(made.error()),
    Catch::Contains("cuda device cuda0: run_as: no user "
                    "\"no-such-user-of-eat\" on this machine"));
}

TEST_CASE("CUDA and HIP devices on the CPU pass the MLA decode baseline and "
          "an instance of each family") {
  for (const char* backend : {"cuda", "hip"})
    check_decode(backend, true,
      {{"kv_shared",
         {{"heads", "4"}, {"tile", "32"}, {"warps", "8"}, {"splits", "4"}}},
        {"warp_split", {{"heads", "2"}, {"warps", "8"}}}});
}

TEST_CASE("CUDA and HIP devices on the CPU pass the GQA decode baseline and "
          "an instance of each family") {
  for (const char* backend : {"cuda", "hip"})
    check_decode(backend, false,
      {{"group_shared",
         {{"heads", "2"}, {"tile", "32"}, {"warps", "8"}, {"lanes", "32"}}},
        {"warp_split", {{"heads", "8"}, {"warps", "4"}}}});
}

TEST_CASE("a copy measured above the table's bandwidth raises the gate's "
          "bandwidth by at most a quarter") {
  // The fake runner reports an H200 (4.8 TB/s in the table) whose copy
  // ran at the figure the test sets.
  ::setenv("EAT_TEST_GPU_NAME", "NVIDIA H200", 1);
  auto bandwidth_at = [](const char* gbps) {
    ::setenv("EAT_TEST_GPU_COPY_GBPS", gbps, 1);
    auto dir = make_temp_dir();
    auto opts = options_on_cpu("cuda", dir, 120);
    opts.peak_bw_override = 0;
    auto made = make_gpu_devices("cuda", opts);
    INFO((made ? std::string{} : render(made.error())));
    REQUIRE(made);
    REQUIRE(made->size() == 1);
    INFO(made->front()->description());
    return std::pair{
      made->front()->caps().peak_bytes_per_s, made->front()->description()};
  };
  auto [below, below_text] = bandwidth_at("4200");
  CHECK(below == Approx(4.8e12));
  CHECK_THAT(below_text, Catch::Contains("copy measured 4200 GB/s"));
  auto [above, above_text] = bandwidth_at("5000");
  CHECK(above == Approx(5.0e12));
  CHECK_THAT(above_text, Catch::Contains("above the table's"));
  auto [far, far_text] = bandwidth_at("90000");
  CHECK(far == Approx(6.0e12));
  CHECK_THAT(far_text, Catch::Contains("(taken as 1.25 x the table's)"));
  ::unsetenv("EAT_TEST_GPU_COPY_GBPS");
  ::unsetenv("EAT_TEST_GPU_NAME");
}

TEST_CASE("GPU devices on the CPU are found, measured and checked through "
          "their runners") {
  for (const std::string backend : {"cuda", "hip"}) {
    INFO(backend);
    auto dir = make_temp_dir();
    auto opts = options_on_cpu(backend, dir, 120);
    opts.peak_bw_override = 0; // measured by `runner --bandwidth 0`
    auto made = make_gpu_devices(backend, opts);
    INFO((made ? std::string{} : render(made.error())));
    REQUIRE(made);
    REQUIRE(made->size() == 1);
    auto& dev = *made->front();
    CHECK(dev.id() == backend + "0");
    CHECK(dev.caps().identity == "FAKE-0");
    CHECK(dev.caps().peak_bytes_per_s > 1e8);
    CHECK_THAT(dev.description(),
      Catch::Contains("host memory runtime")
        && Catch::Contains("a device-to-device copy measured"));
    CHECK(dev.check_health().empty());
    ::setenv("EAT_TEST_GPU_UNHEALTHY", "the fake GPU fell off the bus", 1);
    auto broken = dev.check_health();
    ::unsetenv("EAT_TEST_GPU_UNHEALTHY");
    CHECK(broken == "health check failed: the fake GPU fell off the bus");
  }
}

TEST_CASE("after a run whose runner answered a GPU device's health check "
          "starts no runner and the next one does") {
  auto dir = make_temp_dir();
  auto dev = device_on_cpu("cuda", dir);
  auto task = small_sgemm("cuda");
  check_timed(evaluate(*dev, task, task.baseline_source));
  ::setenv("EAT_TEST_GPU_UNHEALTHY", "broken after the run", 1);
  auto after_run = dev->check_health();
  auto next = dev->check_health();
  ::unsetenv("EAT_TEST_GPU_UNHEALTHY");
  CHECK(after_run.empty());
  CHECK(next == "health check failed: broken after the run");
}
