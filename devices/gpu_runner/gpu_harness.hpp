// The harness inside the GPU runners (eat-cuda-runner, eat-hip-runner):
// opens the GPU, loads the reference (CPU), baseline and candidate (GPU)
// shared objects, then checks and times the candidate against the
// reference and the baseline on every workload, following
// BENCHMARK-PROTOCOL.md sections 2 and 3 as the CPU harness does
// (devices/runner/harness.hpp) with device memory, CUDA/HIP events and a
// device-wide synchronise (docs/harness.md, "CUDA and HIP backends"). Every
// kind, fp32 gemm and definition tasks alike, is seen through the CPU
// side's generic problem (devices/kinds/problem.hpp): typed buffers, the
// reference's fp64 outputs, per-output tolerances and element names.
//
// Runs in the runner process after the sandbox is in place, on its main
// thread; candidate host code runs in this same address space.

#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "devices/gpu_runner/gpu_api.hpp"
#include "devices/gpu_runner/gpu_kind.hpp"
#include "devices/gpu_runner/gpu_problem.hpp"
#include "devices/gpu_runner_protocol.hpp"
#include "devices/kind.hpp"
#include "devices/runner/code_lock.hpp"
#include "devices/runner/harness.hpp"

namespace eat::devices {

/// Everything one workload's phases need; built once per request.
struct gpu_context {
  gpu_api* api = nullptr;
  /// The CPU side of the kind: layouts, drawing, reference calls.
  const kind* k = nullptr;
  const gpu_kind* gk = nullptr;
  /// Entry points found with dlsym: the reference runs on the CPU.
  void* reference = nullptr;
  void* baseline = nullptr;
  void* candidate = nullptr;
  /// The reference's code, inaccessible except while the harness calls it.
  code_lock reference_code;
  /// fp32 kinds' tolerances (definition outputs carry their own).
  tolerance tol;
  /// False: a second run is checked against the reference, not bit for
  /// bit against the first (task_spec::deterministic).
  bool deterministic = true;
  timing_options timing;
  /// Written before each timed sample to flush the L2 cache.
  device_memory flush;
  /// Threads this process may have: the runtime's own, counted after the
  /// first baseline call (0 until then).
  size_t allowed_threads = 0;
};

/// Called once the GPU is open, before any kernel code is loaded, with the
/// request whose shared-object paths it may rewrite; returns why it
/// failed, or an empty string.
using before_loading_fn = std::function<std::string(gpu_runner_request&)>;

/// Runs `req` on the GPU of `api` to its reply: opens the GPU, calls
/// `before_loading` (eat-cuda-runner switches users there), loads the
/// kernels, then each workload in turn until one fails. Never throws.
gpu_runner_reply run_gpu_request(gpu_api& api, gpu_runner_request req,
  const before_loading_fn& before_loading = {});

/// For a runner that made a user namespace of its own (not root): adds to
/// a reply whose GPU could not be opened (a runtime error naming no GPU)
/// that the runtime was in one and how to go without, so that a runtime
/// that cannot work in a user namespace is told from a GPU that is gone.
void note_user_namespace(gpu_runner_reply& reply);

/// The problem of workload `w` as the harness sees it.
problem problem_of(const gpu_context& ctx, const workload& w);

/// Calls `fn` on `buffers` and waits for the whole device; returns "" or
/// why the call failed (an error code returned, or a fault the device
/// reported).
std::string call_on_device(const gpu_context& ctx, void* fn,
  device_problem& buffers, const problem_dims& dims);

/// What the kernel left running after its call, checked after every call
/// (checks) and every round (timing): "hidden threads: N extra thread(s)
/// still running after the call" beyond the runtime's own
/// (`ctx.allowed_threads`, once known), child_processes_text, or "".
std::string left_running(const gpu_context& ctx);

/// What started and ended within a timed round, seen by the PIDs the
/// runner's own namespace gave since `before` (last_pid_given before the
/// rounds, which stays so while every round passes; -1: not counted, as
/// outside such a namespace): "hidden threads: N thread(s) or process(es)
/// started and ended within a timed round", or "". left_running sees what
/// still runs; such a thread could have launched work into the baseline's
/// call and ended before the check.
std::string started_within_round(int64_t before);

/// Checks the candidate on workload `w` against the reference:
/// `check_seeds` random cases and one structured case.
check_outcome check_gpu_workload(
  gpu_context& ctx, const workload& w, uint64_t workload_seed);

/// Times baseline and candidate on `w` in paired rounds, checking every
/// timed output.
timing_outcome time_gpu_workload(
  const gpu_context& ctx, const workload& w, uint64_t workload_seed);

/// Slack of outside_stream_work: host and driver latency a synchronise
/// may add to a call of any length.
constexpr double outside_stream_slack_ns = 100'000;

/// Why the candidate's timed calls show work the events did not see
/// (another stream, a host thread: it still delays the device-wide
/// synchronise), or "". Medians over its timed calls: `events_ns` between
/// the start and stop events; `wall_ns` on the host, from just before the
/// start event was recorded (the L2 flush done) until the device was idle.
/// Rejects when the events saw less than half of it, less the slack.
std::string outside_stream_work(double events_ns, double wall_ns);

/// The host's time of a call beyond its events, as the baseline's timed
/// calls show it (`events_ns[i]` between the events, `wall_ns[i]` on the
/// host, as in outside_stream_work): the median of the differences, the
/// launch after the start event and the synchronise's return; 0 at least.
double host_overhead_ns(
  const std::vector<int64_t>& events_ns, const std::vector<int64_t>& wall_ns);

/// The time each call is charged: its events' time, or, where longer, the
/// host's time less `overhead_ns` (host_overhead_ns). Work that the events
/// did not see but that held the device (a stream of the kernel's own, run
/// past the stop event) is so charged to the kernel that did it; an honest
/// call, baseline or candidate alike, is charged its events' time or the
/// host's noise above it. Applied to both kernels' samples.
std::vector<int64_t> charged_ns(const std::vector<int64_t>& events_ns,
  const std::vector<int64_t>& wall_ns, double overhead_ns);

/// Bytes written to flush a last-level cache of `cache_bytes`: at least
/// twice it, and at least 64 MiB.
uint64_t flush_bytes_for(uint64_t cache_bytes);

/// The Infinity Cache (a memory-side cache behind L2) of an AMD GPU of
/// `arch` ("gfx942", or with features, "gfx942:sramecc+:xnack-"), the
/// largest of its models; 0 for a GPU without one or not known. The HIP
/// runtime reports only L2 (4 MiB on an MI300X, whose 256 MiB Infinity
/// Cache a 64 MiB flush would leave warm).
uint64_t amd_infinity_cache_bytes(const std::string& arch);

} // namespace eat::devices
