// Specification of the GPU runner executables where no GPU is needed: they
// start, answer a malformed request with the protocol's error status, refuse
// a request for the other backend, report an unusable GPU as a runtime
// error, and never depend on a stub libcuda.

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "devices/gpu_runner_client.hpp"
#include "devices/gpu_runner_protocol.hpp"
#include "devices/subprocess.hpp"
#include "tests/devices/gpu_support.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

struct runner_case {
  const char* backend;
  const char* path;
};

std::vector<runner_case> built_runners() {
  std::vector<runner_case> result;
#if EAT_TEST_HAVE_CUDA
  result.push_back({"cuda", EAT_CUDA_RUNNER_PATH});
#endif
#if EAT_TEST_HAVE_HIP
  result.push_back({"hip", EAT_HIP_RUNNER_PATH});
#endif
  return result;
}

gpu_runner_request small_request(const std::string& backend) {
  gpu_runner_request req;
  req.nonce = 0x5eed;
  req.kind = "gemm";
  req.dtype = "float32";
  req.atol = 1e-4;
  req.rtol = 1e-4;
  req.workloads = {gemm_workload(8, 8, 8)};
  req.reference_so = "/nonexistent/reference.so";
  req.baseline_so = "/nonexistent/baseline.so";
  req.candidate_so = "/nonexistent/candidate.so";
  req.core = 0;
  req.backend = backend;
  return req;
}

} // namespace

TEST_CASE("a GPU runner answers a malformed request with exit status 2") {
  for (const auto& r : built_runners()) {
    auto dir = make_temp_dir();
    auto out = run_gpu_runner_bytes(
      {r.path, dir.path().string(), 60}, "\x93not msgpack", 7);
    REQUIRE(out);
    INFO(out->common.detail);
    CHECK(out->common.status == eval_status::runtime_error);
    CHECK_FALSE(out->reply);
    CHECK_THAT(out->common.detail, Catch::Contains("status 2 before reporting"));
    CHECK_THAT(out->common.detail, Catch::Contains("malformed request"));
  }
}

TEST_CASE("a GPU runner refuses a request meant for the other backend") {
  for (const auto& r : built_runners()) {
    auto dir = make_temp_dir();
    auto req = small_request(std::string{r.backend} == "cuda" ? "hip" : "cuda");
    auto out = run_gpu_runner({r.path, dir.path().string(), 60}, req);
    REQUIRE(out);
    REQUIRE(out->reply);
    CHECK(out->reply->status == eval_status::runtime_error);
    CHECK_THAT(out->reply->detail,
      Catch::Contains(std::string{"reached the "} + r.backend + " runner"));
  }
}

TEST_CASE("a GPU runner reports a GPU it cannot use, or a missing kernel") {
  for (const auto& r : built_runners()) {
    auto dir = make_temp_dir();
    auto out = run_gpu_runner(
      {r.path, dir.path().string(), 120}, small_request(r.backend));
    REQUIRE(out);
    REQUIRE(out->reply);
    INFO(out->reply->detail);
    if (probe_built(r.backend).devices.empty()) {
      CHECK(out->reply->status == eval_status::runtime_error);
      CHECK_THAT(out->reply->detail, Catch::Contains("GPU 0 is unavailable"));
    } else {
      CHECK(out->reply->status == eval_status::rejected);
      CHECK_THAT(out->reply->detail, Catch::Contains("the task's reference"));
    }
  }
}

TEST_CASE("a GPU runner's reply decodes as the CPU runner's reply with "
          "every field it shares") {
  // The GPU device reads how a runner ended through the CPU runner's
  // reply: a field the CPU reply gains must travel in the GPU's too.
  gpu_runner_reply gpu;
  gpu.nonce = 7;
  gpu.status = eval_status::rejected;
  gpu.detail = "why";
  gpu.workloads.resize(1);
  gpu.workloads[0].workload = "w";
  gpu.workloads[0].baseline_others_ns = 3;
  gpu.core = 2;
  gpu.candidate_idle_cpu_ns = 5;
  gpu.others_not_taken_off = "not read";
  gpu.workloads[0].interrupts.baseline_above = 4;
  gpu.interrupts_not_counted = "not counted";
  gpu.interrupt_sources = {36, 38};
  gpu.gpu_name = "H200";
  auto cpu = wire::decode<runner_reply>(wire::encode(gpu));
  REQUIRE(cpu);
  CHECK(cpu->nonce == 7);
  CHECK(cpu->status == eval_status::rejected);
  CHECK(cpu->detail == "why");
  REQUIRE(cpu->workloads.size() == 1);
  CHECK(cpu->workloads[0].baseline_others_ns == 3);
  CHECK(cpu->core == 2);
  CHECK(cpu->candidate_idle_cpu_ns == 5);
  CHECK(cpu->others_not_taken_off == "not read");
  CHECK(cpu->workloads[0].interrupts.baseline_above == 4);
  CHECK(cpu->interrupts_not_counted == "not counted");
  CHECK(cpu->interrupt_sources == std::vector<int32_t>{36, 38});
}

#if EAT_TEST_HAVE_CUDA
TEST_CASE("eat-cuda-runner links the CUDA runtime, never a stub libcuda") {
  auto run = run_captured({"ldd", EAT_CUDA_RUNNER_PATH}, "", 60);
  REQUIRE(run);
  INFO(run->output);
  CHECK(run->status.code == 0);
  CHECK_THAT(run->output, Catch::Contains("libcudart.so"));
  CHECK_THAT(run->output, !Catch::Contains("libcuda.so"));
  CHECK_THAT(run->output, !Catch::Contains("stubs"));
  CHECK_THAT(run->output, !Catch::Contains("not found"));
}
#endif
