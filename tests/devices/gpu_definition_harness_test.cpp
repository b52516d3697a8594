// Specification of the GPU runners' harness on definition tasks, run on the
// CPU: the harness (devices/gpu_runner/gpu_harness.hpp) drives a fake
// gpu_api whose "device memory" is host memory and whose "kernels" are host
// functions with the GPU entry ABI, compiled with g++. Everything the
// harness does around a kernel (typed buffers from the generic problem,
// poisoning, guard zones, input read-back, the reference in fp64, the
// second run, per-output tolerances and names, timing and the per-round
// output checks) is the code that runs on a real GPU; only the runtime
// calls are faked. The fp32 gemm kind goes through the same path. The
// checks of the inputs are in gpu_definition_inputs_test.cpp.

#include <catch2/catch.hpp>

#include <map>
#include <memory>

#include "actors/protocol/error.hpp"
#include "devices/gpu_runner/gpu_harness.hpp"
#include "tests/devices/gpu_mini_task.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

TEST_CASE("the GPU harness passes a correct definition kernel on every "
          "workload, output by output") {
  fixture f;
  auto reply = f.run_mini(mini_kernel("", "", "0 * m"));
  INFO(reply.detail);
  REQUIRE(reply.status == eval_status::passed);
  REQUIRE(reply.workloads.size() == 2);
  for (const auto& w : reply.workloads) {
    CHECK(w.status == eval_status::passed);
    CHECK(w.candidate_ns.size() >= 3);
    CHECK(w.candidate_ns.size() == w.baseline_ns.size());
    CHECK(w.input_sets == 2);
    CHECK(w.max_rel_error < 1e-4);
  }
  // One timing set: A and B, plus C and rows twice (baseline, candidate).
  CHECK(reply.workloads[0].set_bytes == 4 * (5 * 7 + 6 * 7) + 2 * 4 * (5 * 6 + 5));
  CHECK(reply.gpu_name == "host memory");
  CHECK(reply.flush_bytes == flush_bytes_for(uint64_t{1} << 20));
}

TEST_CASE("the GPU harness puts the device-wide settings back before every "
          "call it times") {
  // A kernel could leave a setting (CUDA's cache configuration, its L2
  // fetch granularity) that slows the other kernel's calls; the fake
  // counts the restores.
  fixture f;
  auto reply = f.run_mini(mini_kernel("", "", "0 * m"));
  INFO(reply.detail);
  REQUIRE(reply.status == eval_status::passed);
  size_t timed = 0;
  for (const auto& w : reply.workloads)
    timed += w.baseline_ns.size() + w.candidate_ns.size();
  // Each workload's warm-up is one call of each kernel.
  // The runner's own call at the open, then each workload's warm-up (one
  // call of each kernel) and every timed call.
  CHECK(
    f.api.restored == static_cast<int>(1 + timed + 2 * reply.workloads.size()));
}

TEST_CASE("the GPU harness names the wrong element of a definition output") {
  fixture f;
  auto reply = f.run_mini(mini_kernel("if (i == 2 && j == 4) c[i * n + j] += 0.5f;"));
  CHECK(reply.status == eval_status::incorrect);
  CHECK_THAT(reply.detail, Catch::Contains("C[2][4]"));
  CHECK_THAT(reply.detail, Catch::Contains("workload m5"));
}

TEST_CASE("the GPU harness reports an integer output left unwritten") {
  fixture f;
  auto reply = f.run_mini(mini_kernel("", "", "0",
    "if (i + 1 < m) rows[i] = static_cast<int32_t>(i + 1);"));
  CHECK(reply.status == eval_status::incorrect);
  CHECK_THAT(reply.detail, Catch::Contains("rows[4]"));
  CHECK_THAT(reply.detail, Catch::Contains("not written"));
}

TEST_CASE("the GPU harness catches a write past a definition output") {
  fixture f;
  auto reply = f.run_mini(mini_kernel("", "c[m * n + 3] = 1.0f;"));
  CHECK(reply.status == eval_status::incorrect);
  CHECK_THAT(reply.detail, Catch::Contains("outside its output buffer 'C'"));
}

TEST_CASE("the GPU harness catches a write before an integer output") {
  fixture f;
  auto reply = f.run_mini(mini_kernel("", "rows[-1] = 7;"));
  CHECK(reply.status == eval_status::incorrect);
  CHECK_THAT(reply.detail, Catch::Contains("outside its output buffer 'rows'"));
}

TEST_CASE("the GPU harness catches a kernel whose runs differ") {
  fixture f;
  auto reply = f.run_mini(mini_kernel("",
    "static int calls = 0; if (calls++ % 2 == 1) c[0] = std::nextafter(c[0], "
    "1e9f);"));
  CHECK(reply.status == eval_status::incorrect);
  CHECK_THAT(reply.detail, Catch::Contains("not deterministic: C[0][0]"));
}

TEST_CASE("the GPU harness lets runs differ within tolerance where the task "
          "allows it, and fails a second run beyond it") {
  fixture f;
  auto run = [&](const std::string& tail) {
    auto req = f.one_workload(mini_kernel(), mini_kernel("", tail));
    req.deterministic = false;
    return run_gpu_request(f.api, req);
  };
  auto close = run("static int calls = 0; if (calls++ % 2 == 1) c[0] = "
                   "std::nextafter(c[0], 1e9f);");
  INFO(close.detail);
  CHECK(close.status == eval_status::passed);
  auto far = run("static int calls = 0; if (calls++ % 2 == 1) c[0] += 1.0f;");
  CHECK(far.status == eval_status::incorrect);
  CHECK_THAT(far.detail, Catch::Contains("second run on the same inputs"));
}

TEST_CASE("the GPU harness catches a kernel that writes zeros once it is "
          "timed, and names the element") {
  // The first workload's checks make 6 calls (3 cases, each run twice),
  // its warm-up 1, and its timing at least 3 (min_samples): the 9th call,
  // its second timed one, is the first to write zeros. (With 12 here, the
  // timing could stop after 3 samples, its noise allowing, and the second
  // workload's checks caught the zeros instead.)
  fixture f;
  auto reply = f.run_mini(mini_kernel("",
    "static int calls = 0; if (++calls > 8) for (int64_t i = 0; i < m * n; "
    "++i) c[i] = 0;"));
  CHECK(reply.status == eval_status::incorrect);
  CHECK_THAT(reply.detail, Catch::Contains("timing: output differs from the "
                                           "baseline's on the same inputs"));
  INFO(reply.detail);
  CHECK_THAT(reply.detail, Catch::Contains(" = 0 but expected "));
}

TEST_CASE("the GPU harness catches a thread that a timed call leaves "
          "running until the next") {
  // As above, the 8th call is the first timed one. Its thread blocks until
  // the 9th call ends it: it uses no CPU time, and is gone when the
  // workload ends, but on a GPU it could launch work into the baseline's
  // calls in between. (Its mutex and condition are never destroyed: left
  // waiting once the harness rejects, the thread would block a destructor
  // at the unloading of the kernel's library in this process.)
  fixture f;
  auto reply = f.run_mini(
    "#include <condition_variable>\n#include <mutex>\n"
    "#include <thread>\n"
    + mini_kernel("",
      "static int calls = 0; static auto* mu = new std::mutex; "
      "static auto* cv = new std::condition_variable; static bool done = "
      "false; static std::thread* t = nullptr; "
      "if (t != nullptr) { { std::lock_guard<std::mutex> g{*mu}; done = true; "
      "} cv->notify_all(); t->join(); delete t; t = nullptr; } "
      "if (++calls == 8) t = new std::thread{[] { "
      "std::unique_lock<std::mutex> g{*mu}; cv->wait(g, [] { return done; }); "
      "}};"));
  INFO(reply.detail);
  CHECK(reply.status == eval_status::rejected);
  CHECK_THAT(reply.detail,
    Catch::Contains("timing: hidden threads: 1 extra thread(s) still running "
                    "after the call"));
}

TEST_CASE("the GPU harness's sampled element checks pass an exact zero where "
          "the baseline has a tiny value within tolerance") {
  // Every C is ~1e-8 (atol 1e-4); the candidate writes every other element
  // as an exact zero. A single sampled element of 0 against 1e-8 is within
  // tolerance; "all zeros" judges only a whole output (an fp16 kernel that
  // rounds to 0 where the baseline keeps a subnormal was failed so).
  fixture f;
  auto reference = std::string{mini_reference};
  auto at = reference.find("out[0][i * n + j] = s;");
  REQUIRE(at != std::string::npos);
  reference.replace(at, 22, "out[0][i * n + j] = 1e-8 * s;");
  auto baseline = mini_kernel("c[i * n + j] *= 1e-8f;");
  auto candidate = mini_kernel(
    "c[i * n + j] = (i * n + j) % 2 == 0 ? 0.0f : c[i * n + j] * 1e-8f;");
  auto req = f.request("definition", {mini_gemm(5, 6, 7)}, reference,
    baseline, candidate);
  auto reply = run_gpu_request(f.api, req);
  INFO(reply.detail);
  CHECK(reply.status == eval_status::passed);
}

TEST_CASE("the GPU harness reports a kernel's error code as a runtime error") {
  fixture f;
  auto reply = f.run_mini(mini_kernel("", "", "700"));
  CHECK(reply.status == eval_status::runtime_error);
  CHECK_THAT(reply.detail, Catch::Contains("returned error 700: fake error 700"));
}

TEST_CASE("a launch that failed inside a kernel's call is reported though "
          "the kernel returned 0") {
  // Read right after the call: HIP before ROCm 7.0 loses it at the next
  // successful runtime call, and the outputs were left poisoned.
  SECTION("in the baseline's first check: the evaluation is rejected") {
    fixture f;
    f.api.call_failure = "fake launch failure";
    auto reply = f.run_mini(mini_kernel());
    CHECK(reply.status == eval_status::rejected);
    CHECK_THAT(reply.detail,
      Catch::Contains(
        "the GPU runtime reported an error: fake launch failure"));
  }
  SECTION("in a timed call: a runtime error") {
    fixture f;
    f.api.call_failure = "fake launch failure";
    // The 4th start event: the open's, the warm-up's two, the first
    // timed call's.
    f.api.fail_timed_call = 4;
    auto reply = f.run_mini(mini_kernel());
    CHECK(reply.status == eval_status::runtime_error);
    CHECK_THAT(reply.detail,
      Catch::Contains("timing: the GPU runtime reported an error: fake "
                      "launch failure"));
  }
}

TEST_CASE("a GPU that a runner in a user namespace could not open is "
          "reported with the way to go without one, and other failures "
          "without it") {
  fixture f;
  auto req = f.request("definition", {mini_gemm(2, 2, 2)}, mini_reference,
    mini_kernel(), mini_kernel());
  req.gpu = 1;
  auto unopened = run_gpu_request(f.api, req);
  note_user_namespace(unopened);
  CHECK(unopened.status == eval_status::runtime_error);
  CHECK_THAT(unopened.detail,
    Catch::StartsWith("GPU 1 is unavailable: no such fake GPU (the runner, "
                      "not root, ran in a user namespace of its own; if the "
                      "GPU runtime cannot work in one, set user_namespace = "
                      "false in [devices.cuda] or [devices.hip])"));
  auto kernel_failed = f.run_mini(mini_kernel("", "", "700"));
  auto detail = kernel_failed.detail;
  note_user_namespace(kernel_failed);
  CHECK(kernel_failed.detail == detail);
  auto passed = f.run_mini(mini_kernel());
  note_user_namespace(passed);
  CHECK(passed.detail.empty());
}

TEST_CASE("the GPU harness refuses a definition kernel without eat_kernel") {
  fixture f;
  auto reply = f.run_mini("extern \"C\" int eat_gemm() { return 0; }\n");
  CHECK(reply.status == eval_status::compile_error);
  CHECK_THAT(reply.detail, Catch::Contains("does not define eat_kernel"));
}

TEST_CASE("the GPU harness refuses kinds without a GPU entry ABI and "
          "unresolved definition workloads") {
  fixture f;
  auto req = f.request("definition", {mini_gemm(2, 2, 2)}, mini_reference,
    mini_kernel(), mini_kernel());
  SECTION("rmsnorm has no GPU ABI") {
    req.kind = "rmsnorm";
    auto reply = run_gpu_request(f.api, req);
    CHECK(reply.status == eval_status::rejected);
    CHECK_THAT(reply.detail, Catch::Contains("no GPU entry ABI"));
  }
  SECTION("a definition workload without outputs") {
    req.workloads[0].outputs.clear();
    auto reply = run_gpu_request(f.api, req);
    CHECK(reply.status == eval_status::rejected);
    CHECK_THAT(reply.detail, Catch::Contains("no outputs"));
  }
}

TEST_CASE("the fp32 gemm kind runs through the same GPU harness path") {
  fixture f;
  auto kernel = [](const std::string& body) {
    return R"(#include <cstdint>
extern "C" int eat_gemm(const float* a, const float* b, float* c, int64_t m,
    int64_t n, int64_t k, void* stream) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (int64_t p = 0; p < k; ++p) s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
)" + body + "\n  return 0;\n}\n";
  };
  auto reference = read_source("kernels/sgemm_cuda/reference.cpp");
  auto run = [&](const std::string& candidate) {
    return run_gpu_request(f.api, f.request("gemm", {gemm_workload(9, 13, 11)},
                                    reference, kernel(""), candidate));
  };
  auto good = run(kernel(""));
  INFO(good.detail);
  CHECK(good.status == eval_status::passed);
  auto bad = run(kernel("c[5] += 1.0f;"));
  CHECK(bad.status == eval_status::incorrect);
  CHECK_THAT(bad.detail, Catch::Contains("C[0][5]"));
  auto wild = run(kernel("c[m * n] = 0.0f;"));
  CHECK(wild.status == eval_status::incorrect);
  CHECK_THAT(wild.detail, Catch::Contains("outside its output"));
}

TEST_CASE("device buffers follow the problem's layout: one per input, "
          "guarded outputs, poison per dtype, and a redraw there matches the "
          "host's") {
  host_gpu_api api;
  auto p
    = problem::make(*find_kind("definition"), mini_gemm(2, 3, 4), tolerance{});
  auto made = device_problem::make(api, p);
  REQUIRE(made);
  auto& d = *made;
  REQUIRE(d.inputs().size() == 2);
  REQUIRE(d.outputs().size() == 2);
  CHECK(d.inputs()[0] != d.inputs()[1]);
  for (auto* out : d.outputs())
    CHECK(reinterpret_cast<uintptr_t>(out) % 256 == 0);
  auto inputs = p.make_inputs(input_style::random, 9);
  REQUIRE(d.upload(inputs).empty());
  auto same = d.inputs_equal(inputs);
  REQUIRE(same);
  CHECK(*same);
  REQUIRE(d.poison().empty());
  std::vector<guarded_bytes> out;
  REQUIRE(d.download(out).empty());
  REQUIRE(out.size() == 2);
  CHECK(out[0] == poison_image(dtype::float32, 6));
  CHECK(out[1] == poison_image(dtype::int32, 2));
  // A redraw on the device draws what the host's redraw draws, seed for
  // seed.
  REQUIRE(d.redraw(p, 4).empty());
  same = d.inputs_equal(inputs);
  REQUIRE(same);
  CHECK_FALSE(*same);
  p.redraw(inputs, 4);
  same = d.inputs_equal(inputs);
  REQUIRE(same);
  CHECK(*same);
}

TEST_CASE("the GPU harness rejects a call whose device stays busy long after "
          "its stop event") {
  // 20 us between the events, 2 ms until the device was idle: work on
  // another stream or a host thread that the events did not time.
  auto why = outside_stream_work(20'000, 2'000'000);
  CHECK_THAT(why, Catch::Contains("work outside the timed stream"));
  CHECK_THAT(why, Catch::Contains("the events saw 20000 ns"));
  CHECK_THAT(why, Catch::Contains("took 2000000 ns"));
}

TEST_CASE("the GPU harness allows a synchronise some latency past the events") {
  CHECK(outside_stream_work(1'000, 200'000).empty());
  CHECK(outside_stream_work(10'000'000, 20'000'000).empty());
  CHECK_FALSE(outside_stream_work(10'000'000, 20'300'000).empty());
}

TEST_CASE("the GPU harness charges a call the host's time less the "
          "baseline's overhead where the events saw less") {
  // The baseline's calls: the host saw each 8 us beyond its events (the
  // launch after the start event, the synchronise's return), 9 us once.
  std::vector<int64_t> base_events = {50'000, 51'000, 49'000, 50'000, 52'000};
  std::vector<int64_t> base_walls = {58'000, 59'000, 57'000, 59'000, 60'000};
  CHECK(host_overhead_ns(base_events, base_walls) == 8'000);
  // Honest calls are charged their events' time, or the host's noise
  // above it.
  CHECK(charged_ns(base_events, base_walls, 8'000)
        == std::vector<int64_t>{50'000, 51'000, 49'000, 51'000, 52'000});
  // A kernel that launched its work on a stream of its own: the events saw
  // a 3 us spin, the device was busy 45 us more (within the slack of
  // outside_stream_work). It is charged the 45 us.
  std::vector<int64_t> events = {3'000, 3'000, 3'000};
  std::vector<int64_t> walls = {56'000, 55'000, 57'000};
  CHECK(outside_stream_work(3'000, 56'000).empty());
  CHECK(charged_ns(events, walls, 8'000)
        == std::vector<int64_t>{48'000, 47'000, 49'000});
  // A host that saw less than the overhead never lowers a sample.
  CHECK(charged_ns({10'000}, {12'000}, 8'000) == std::vector<int64_t>{10'000});
  // No overhead below 0, nor from no calls.
  CHECK(host_overhead_ns({10'000}, {9'000}) == 0);
  CHECK(host_overhead_ns({}, {}) == 0);
}

namespace {

/// The fake GPU, keeping what was queued on the device since it was last
/// idle (synchronised), and what was queued when each start event was
/// recorded.
class queue_watching_api : public host_gpu_api {
public:
  std::vector<std::string> queued;
  std::vector<std::string> at_start;
  /// Flushes waited for before the next start event.
  size_t flushes = 0;

  std::string to_device(void* dst, const void* src, size_t bytes) override {
    queued.push_back("copy");
    return host_gpu_api::to_device(dst, src, bytes);
  }
  std::string fill_async(void* ptr, int value, size_t bytes) override {
    queued.push_back("fill");
    return host_gpu_api::fill_async(ptr, value, bytes);
  }
  std::string fill_uniform_async(void* ptr, dtype t, size_t count, double lo,
    double hi, uint64_t seed) override {
    queued.push_back("redraw");
    return host_gpu_api::fill_uniform_async(ptr, t, count, lo, hi, seed);
  }
  std::string reset_persisting_l2() override {
    queued.push_back("reset");
    return host_gpu_api::reset_persisting_l2();
  }
  std::string record(int event) override {
    if (event == 0) {
      std::string seen;
      for (const auto& q : queued)
        seen += (seen.empty() ? "" : ", ") + q;
      at_start.push_back(seen);
    }
    queued.push_back("event " + std::to_string(event));
    return host_gpu_api::record(event);
  }
  std::string synchronize() override {
    if (queued == std::vector<std::string>{"reset", "fill"})
      ++flushes;
    queued.clear();
    return host_gpu_api::synchronize();
  }
};

} // namespace

TEST_CASE("the GPU harness records each start event on an idle device, "
          "the L2 flush done") {
  // Work still queued at the start event (the round's input redraw, the
  // poison of the outputs, the flush) would run in the host's time of the
  // call, and a stream of the kernel's own could run its work beside it,
  // unseen by the events.
  fixture f;
  queue_watching_api api;
  auto req = f.one_workload(mini_kernel(), mini_kernel());
  auto reply = run_gpu_request(api, req);
  INFO(reply.detail);
  REQUIRE(reply.status == eval_status::passed);
  REQUIRE(api.at_start.size() >= 2 * reply.workloads[0].candidate_ns.size());
  for (const auto& seen : api.at_start)
    CHECK(seen.empty());
  // The flush was queued, and waited for, before every timed call (the
  // first start event is the runner's use of its events at the open).
  CHECK(api.flushes >= api.at_start.size() - 1);
}

TEST_CASE("the GPU harness flushes twice the last cache before memory, an "
          "AMD GPU's Infinity Cache where it has one") {
  CHECK(flush_bytes_for(uint64_t{50} << 20) == uint64_t{100} << 20);
  CHECK(flush_bytes_for(uint64_t{4} << 20) == uint64_t{64} << 20);
  // An MI300X reports 4 MiB of L2; its 256 MiB Infinity Cache is what a
  // flush must clear.
  CHECK(
    amd_infinity_cache_bytes("gfx942:sramecc+:xnack-") == uint64_t{256} << 20);
  CHECK(amd_infinity_cache_bytes("gfx942") == uint64_t{256} << 20);
  CHECK(amd_infinity_cache_bytes("gfx1100") == uint64_t{96} << 20);
  // MI200s have none; unknown and malformed names get none.
  CHECK(amd_infinity_cache_bytes("gfx90a:sramecc+:xnack-") == 0);
  CHECK(amd_infinity_cache_bytes("gfx9420") == 0);
  CHECK(amd_infinity_cache_bytes("") == 0);
}
