// eat-runner driven directly through the runner client: what its reply
// carries beyond eval_result, and how it refuses a bad request.

#include <filesystem>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "devices/compiler.hpp"
#include "devices/cpu_device.hpp"
#include "devices/runner/checks.hpp"
#include "devices/runner/timing_sets.hpp"
#include "devices/runner_client.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

std::string compile_or_fail(
  const compiler& comp, const std::string& source, const char* file) {
  auto result = comp.compile(source, {"-O2", "-std=c++17"}, file);
  REQUIRE(result);
  REQUIRE(result->ok);
  return result->so_path;
}

/// Runs a 40x24x16 sgemm, a tiled candidate against the naive baseline,
/// with short timing, through eat-runner on `core`, in `dir` (its compile
/// cache and the runner's scratch directory), as request 77.
caf::expected<runner_outcome> run_small_sgemm(
  const std::filesystem::path& dir, int core, bool kernel_processes) {
  auto comp = compiler::make("g++", (dir / "cache").string(), 60);
  REQUIRE(comp);
  auto task = sgemm_task({gemm_workload(40, 24, 16)});
  runner_request req;
  req.nonce = 77;
  req.kind = task.kind;
  req.dtype = task.dtype;
  req.atol = task.atol;
  req.rtol = task.rtol;
  req.workloads = task.workloads;
  req.reference_so
    = compile_or_fail(*comp, task.reference_source, "reference.cpp");
  req.baseline_so = compile_or_fail(*comp, task.baseline_source, "b.cpp");
  req.candidate_so
    = compile_or_fail(*comp, tiled_source("kij", 8, 8, 8), "c.cpp");
  req.seed = 5;
  req.core = core;
  req.timing.warmup = 1;
  req.timing.min_samples = 5;
  req.timing.min_time_s = 0;
  req.timing.max_time_s = 0.2;
  req.kernel_processes = kernel_processes;
  std::filesystem::create_directories(dir / "scratch");
  runner_launch launch{EAT_RUNNER_PATH, (dir / "scratch").string(), 60};
  return run_runner(launch, req);
}

} // namespace

TEST_CASE("the runner reports paired samples, its core, and input sets that "
          "exceed 32 MiB together") {
  auto dir = make_temp_dir();
  auto core = resolve_core(-1);
  REQUIRE(core);
  auto out = run_small_sgemm(dir.path(), *core, false);
  REQUIRE(out);
  INFO(out->detail);
  REQUIRE(out->reply);
  const auto& reply = *out->reply;
  CHECK(reply.status == eval_status::passed);
  CHECK(reply.nonce == 77);
  CHECK(reply.core == *core);
  REQUIRE(reply.workloads.size() == 1);
  const auto& w = reply.workloads[0];
  CHECK(w.candidate_ns.size() >= 5);
  CHECK(w.baseline_ns.size() == w.candidate_ns.size());
  // 40x16 + 16x24 inputs and two 40x24 outputs, in floats.
  CHECK(w.set_bytes == 4 * (40 * 16 + 16 * 24 + 2 * 40 * 24));
  CHECK(uint64_t{w.input_sets} * w.set_bytes >= uint64_t{32} << 20);
  // The wall time the CPU time is compared with covers each sample and the
  // CPU-time reads around it: strictly more than the samples themselves.
  int64_t sampled_ns = 0;
  for (auto ns : w.candidate_ns)
    sampled_ns += ns;
  CHECK(w.candidate_wall_ns > sampled_ns);
  // An honest single-threaded kernel: measurable CPU time, and no false
  // alarm from the hidden-thread gate.
  CHECK(w.candidate_cpu_ns > 0);
  CHECK_FALSE(shows_hidden_threads(
    w.candidate_cpu_ns, w.candidate_wall_ns, w.candidate_ns.size()));
  // The scratch directory is gone once run_runner returns.
  CHECK(std::filesystem::is_empty(dir.path() / "scratch"));
}

TEST_CASE("with kernel processes the runner's input sets span about 8 MiB "
          "together") {
  auto dir = make_temp_dir();
  auto core = resolve_core(-1);
  REQUIRE(core);
  auto out = run_small_sgemm(dir.path(), *core, true);
  REQUIRE(out);
  INFO(out->detail);
  REQUIRE(out->reply);
  CHECK(out->reply->status == eval_status::passed);
  CHECK(out->reply->kernel_processes);
  REQUIRE(out->reply->workloads.size() == 1);
  const auto& w = out->reply->workloads[0];
  auto spanned = uint64_t{w.input_sets} * w.set_bytes;
  CHECK(spanned >= kernel_process_span_bytes);
  CHECK(spanned < kernel_process_span_bytes + w.set_bytes);
}

TEST_CASE("the runner refuses a request that does not decode, on stderr") {
  auto dir = make_temp_dir();
  auto request = make_pipe();
  auto reply = make_pipe();
  REQUIRE(request);
  REQUIRE(reply);
  REQUIRE(::write(request->write.get(), "nonsense", 8) == 8);
  request->write.reset();
  process_spec spec;
  spec.argv = {EAT_RUNNER_PATH};
  spec.fds = {{runner_request_fd, request->read.get()},
    {runner_reply_fd, reply->write.get()}};
  spec.files = {{2, (dir.path() / "stderr.txt").string()}};
  auto child = child_process::spawn(spec);
  REQUIRE(child);
  REQUIRE(child->wait_until(deadline_in(30)));
  auto status = child->reap();
  CHECK(status.exited);
  CHECK(status.code == 2);
  auto text = read_text(dir.path() / "stderr.txt");
  CHECK(text.find("eat-runner: malformed request") != std::string::npos);
}
