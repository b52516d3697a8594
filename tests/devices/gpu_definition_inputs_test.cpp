// Specification of the GPU runners' checks of a kernel's inputs, on the
// CPU through the fake gpu_api (tests/devices/gpu_mini_task.hpp): inputs
// written by a kernel, in its own buffers or in both kernels' alike,
// caught against the host's draw of the round; the GPU's fill checked
// against the host's before any kernel loads; the timing's calls made
// once there; the host's draw in the default floating-point environment.

#include <catch2/catch.hpp>

#include <cfenv>
#include <string>

#include "actors/protocol/error.hpp"
#include "devices/gpu_runner/gpu_harness.hpp"
#include "tests/devices/gpu_mini_task.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

TEST_CASE("the GPU harness catches a kernel that writes its inputs") {
  fixture f;
  auto reply = f.run_mini(mini_kernel("", "const_cast<float*>(a)[0] = 0.25f;"));
  CHECK(reply.status == eval_status::incorrect);
  CHECK_THAT(reply.detail, Catch::Contains("input mutated"));
}

TEST_CASE("the GPU harness catches inputs rewritten in both kernels' "
          "buffers alike in timed calls") {
  // Baseline and candidate alike rewrite A[4][0] from their first timed
  // call on, before they read it: their outputs agree, both kernels' copies
  // of the inputs agree, and the reference on the inputs as they are agrees
  // too. Only the host's own draw of the round's inputs shows the change.
  // (On a GPU the candidate could rewrite the baseline's buffers itself,
  // which lie in its address space, and so choose what the baseline is
  // timed on.) The baseline makes 1 call in the checks and 1 in the
  // warm-up, the candidate 6 and 1; the two sources differ, so that each
  // object has a count of its own.
  fixture f;
  auto rewrite = [](int untimed) {
    return mini_kernel("static int calls = 0; if (i == 0 && j == 0 && ++calls "
                       "> "
                       + std::to_string(untimed)
                       + ") const_cast<float*>(a)[(m - 1) * k] = 0.5f;");
  };
  auto req = f.one_workload(rewrite(2), rewrite(7));
  auto reply = run_gpu_request(f.api, req);
  INFO(reply.detail);
  CHECK(reply.status == eval_status::incorrect);
  CHECK_THAT(reply.detail,
    Catch::Contains("input mutated: A[4][0] in both kernels' buffers "
                    "no longer holds what the harness drew for the round"));
}

TEST_CASE("the GPU harness checks every set's inputs once the timing is "
          "over, with no secret sample too") {
  // With reference_samples = 0 no round is kept, so no round's inputs were
  // read back: a kernel that wrote into its inputs after computing, in its
  // timed calls only, passed. The end's check of both copies of every set
  // names the one that changed.
  fixture f;
  auto req = f.one_workload(mini_kernel(),
    mini_kernel("",
      "static int calls = 0; if (++calls > 7) const_cast<float*>(a)[0] = "
      "0.25f;"));
  req.timing.reference_samples = 0;
  auto reply = run_gpu_request(f.api, req);
  INFO(reply.detail);
  CHECK(reply.status == eval_status::incorrect);
  CHECK_THAT(reply.detail,
    Catch::Contains("timed calls: input mutated: A[0][0] in the candidate's "
                    "buffers no longer holds what the harness drew"));
}

TEST_CASE("a GPU whose fill draws other inputs than the host's is refused "
          "before any kernel is loaded") {
  // The timing checks the device's inputs against the host's draw of the
  // round: with a fill that disagreed, every kernel would be taken for one
  // that rewrote its inputs. The runner says what is wrong instead.
  fixture f;
  f.api.misdraw_bfloat16 = true;
  auto req = f.one_workload(mini_kernel(), mini_kernel());
  auto reply = run_gpu_request(f.api, req);
  CHECK(reply.status == eval_status::runtime_error);
  CHECK(reply.detail
        == "the GPU draws other bfloat16 inputs than the host does (element "
           "3 of a draw between -1 and 1), so its timed inputs cannot be "
           "checked: a fault of eat's fill kernel or of the compiler that "
           "built it, not of the kernel evaluated");
  CHECK(reply.workloads.empty());
  f.api.misdraw_bfloat16 = false;
  CHECK(run_gpu_request(f.api, req).status == eval_status::passed);
}

namespace {

/// The fake GPU, with events whose times cannot be read.
class broken_events_api : public host_gpu_api {
public:
  caf::expected<float> elapsed_ms(int, int) override {
    return make_error(error::runner_failed, "fake event failure");
  }
};

} // namespace

TEST_CASE("the GPU runner makes the timing's calls once before any kernel "
          "code loads") {
  // The runtime's own threads are counted after the baseline's first
  // call; a runtime that started one as it first launched the fill, put a
  // setting back, reset the persisting L2 or used an event, in a timed
  // round, would have it counted against the candidate ("hidden threads").
  fixture f;
  auto req = f.one_workload(mini_kernel(), mini_kernel());
  struct seen_calls {
    int fills = -1;
    int restores = -1;
    int l2_resets = -1;
    int start_events = -1;
  };
  auto seen_before_loading = [](host_gpu_api& api, gpu_runner_request& req,
                               seen_calls& seen) {
    return run_gpu_request(api, req, [&](gpu_runner_request&) -> std::string {
      seen = {api.uniform_fills, api.restored, api.l2_resets, api.timed_calls};
      return {};
    });
  };
  SECTION("each made once the GPU is open") {
    seen_calls seen;
    auto reply = seen_before_loading(f.api, req, seen);
    CHECK(reply.status == eval_status::passed);
    // Three floating types, three ranges each (the task's float32 in
    // [-1, 1) among them).
    CHECK(seen.fills == 9);
    CHECK(seen.restores == 1);
    CHECK(seen.l2_resets == 1);
    CHECK(seen.start_events == 1);
  }
  SECTION("a draw of the task's own is checked too") {
    req.workloads[0].inputs[0].generator = "uniform";
    req.workloads[0].inputs[0].low = 0.5;
    req.workloads[0].inputs[0].high = 2.0;
    seen_calls seen;
    auto reply = seen_before_loading(f.api, req, seen);
    CHECK(reply.status == eval_status::passed);
    CHECK(seen.fills == 10);
  }
  SECTION("events that fail are the runner's failure, before any kernel") {
    broken_events_api api;
    auto reply = run_gpu_request(api, req);
    CHECK(reply.status == eval_status::runtime_error);
    CHECK_THAT(reply.detail,
      Catch::StartsWith(
        "the GPU's timing calls failed before any kernel loaded: ")
        && Catch::EndsWith("fake event failure"));
  }
}

TEST_CASE("the host draws a round's inputs in the default floating-point "
          "environment, whatever a kernel left in the runner's") {
  // The candidate sets rounding upward from its first timed call on, and
  // A is drawn in [0.5, 2), where the draw rounds (a product, then a sum).
  // The GPU's fill is not the host's rounding mode's to change (the fake's
  // draws in the default environment, as a GPU would); the host's draw of
  // the round, compared with it, must not be either, or an honest kernel
  // would be "input mutated".
  fixture f;
  auto req = f.one_workload(mini_kernel(),
    "#include <cfenv>\n"
      + mini_kernel("",
        "static int calls = 0; if (++calls > 7) std::fesetround(FE_UPWARD);"));
  req.workloads[0].inputs[0].generator = "uniform";
  req.workloads[0].inputs[0].low = 0.5;
  req.workloads[0].inputs[0].high = 2.0;
  auto reply = run_gpu_request(f.api, req);
  // This process's own environment back, for the tests after this one.
  auto upward = std::fegetround() == FE_UPWARD;
  std::fesetround(FE_TONEAREST);
  INFO(reply.detail);
  CHECK(upward);
  CHECK(reply.status == eval_status::passed);
}
