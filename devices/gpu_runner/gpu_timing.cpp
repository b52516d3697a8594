// The timing phase of one workload on a GPU (BENCHMARK-PROTOCOL.md
// section 3). Each sample: poison the outputs, wait for the device to be
// idle, reset persisting L2 and flush L2 (a memset of a buffer >= 2x L2),
// wait for the device to be idle again, record the start event, call,
// record the stop event, synchronise the whole device. The sample is the
// time between the events, or, where longer, the host's time of the call
// less the baseline's usual overhead (charged_ns in gpu_harness.hpp): work
// the events did not see, on a stream of the kernel's own, is charged to
// it. Baseline and candidate alternate in random
// order; inputs are drawn anew every round; every timed output is checked
// against the baseline's output of the same round (the baseline was checked
// against the reference) on a random subset of elements of each output,
// and completely on each set's last round; a secret sample of the rounds
// is compared with the reference after the timing (timed_sample.hpp), its
// inputs with the host's draw of the round, as are the inputs of every
// set at the end.

#include <algorithm>
#include <cfenv>
#include <chrono>
#include <cmath>
#include <optional>

#include "actors/protocol/error.hpp"
#include "devices/gpu_runner/gpu_harness.hpp"
#include "devices/runner/checks.hpp"
#include "devices/runner/secrets.hpp"
#include "devices/runner/timed_sample.hpp"
#include "devices/stopping_rule.hpp"

namespace eat::devices {

namespace {

constexpr size_t max_rounds = 100'000;
constexpr uint64_t set_stream = 1'000'000;
/// Input sets rotated through (pointer-keyed result caches see new data).
constexpr size_t input_sets = 2;
/// Elements of each timed output compared with the baseline's.
constexpr size_t checked_elements = 4096;

/// One input set on the device, with outputs for each kernel.
struct gpu_set {
  /// The inputs as the host drew them; inputs_as_drawn redraws its free
  /// floating ones with `seed` to see what the device should hold.
  std::vector<typed_buffer> inputs;
  /// The seed of the set's last redraw on the device.
  uint64_t seed = 0;
  /// The seed `inputs` were last redrawn with on the host, if any.
  std::optional<uint64_t> host_seed;
  device_problem baseline;
  device_problem candidate;
  bool used = false;
};

struct timed_call {
  int64_t event_ns = 0;
  /// Host wall time from just before the start event was recorded until
  /// the device was idle.
  int64_t wall_ns = 0;
  /// Process CPU time, read just outside wall_ns.
  int64_t cpu_ns = 0;
  /// Wall time over the interval cpu_ns covers (see the CPU runner's
  /// timing_phase.cpp): what the hidden-thread gate compares it with.
  int64_t span_ns = 0;
  std::string error;
};

timed_call failed_call(std::string why) {
  timed_call t;
  t.error = std::move(why);
  return t;
}

/// Puts the device-wide settings back, resets persisting L2 and flushes
/// L2 with a value that changes every sample, and waits until the flush is
/// done. The start event then finds the device idle, so that the host's launch
/// of the kernel (a few microseconds, alike for both kernels) falls between the
/// events. Until 2026-12-07 the start event was queued behind the flush to hide
/// that latency; but a kernel that launched its work on a stream of its own ran
/// it beside the flush, unseen by the events (review of the GPU harness).
std::string flush_l2(const gpu_context& ctx, uint8_t value) {
  if (auto why = ctx.api->restore_settings(); !why.empty())
    return why;
  if (auto why = ctx.api->reset_persisting_l2(); !why.empty())
    return why;
  if (auto why = ctx.api->fill_async(ctx.flush.get(), value, ctx.flush.bytes());
      !why.empty())
    return why;
  if (auto why = ctx.api->synchronize(); !why.empty())
    return "the GPU runtime reported an error: " + why;
  return {};
}

/// Whole nanoseconds from event `from` to event `to`.
caf::expected<int64_t> elapsed_ns(gpu_api& api, int from, int to) {
  auto ms = api.elapsed_ms(from, to);
  if (!ms)
    return std::move(ms.error());
  return std::llround(static_cast<double>(*ms) * 1e6);
}

timed_call time_one(const gpu_context& ctx, void* fn, device_problem& buffers,
  const problem_dims& dims, uint8_t flush_value) {
  timed_call t;
  auto& api = *ctx.api;
  if (auto why = buffers.poison(); !why.empty())
    return failed_call(why);
  // The device idle before the flush: the round's redraw and the poison,
  // queued ahead of it, are in neither the flush's time nor the host's
  // time of the call.
  if (auto why = api.synchronize(); !why.empty())
    return failed_call("the GPU runtime reported an error: " + why);
  if (auto why = flush_l2(ctx, flush_value); !why.empty())
    return failed_call(why);
  auto s0 = std::chrono::steady_clock::now();
  auto cpu0 = process_cpu_ns();
  auto t0 = std::chrono::steady_clock::now();
  if (auto why = api.record(0); !why.empty())
    return failed_call(why);
  auto rc = ctx.gk->call(fn, buffers.inputs().data(),
    buffers.outputs().data(), dims.data(), api.stream());
  auto launch = api.call_error();
  auto stop = api.record(1);
  auto sync = api.synchronize();
  t.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::steady_clock::now() - t0)
                .count();
  t.cpu_ns = process_cpu_ns() - cpu0;
  t.span_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::steady_clock::now() - s0)
                .count();
  if (rc != 0)
    t.error = "the kernel returned error " + std::to_string(rc) + ": "
              + api.error_text(rc);
  else if (!launch.empty())
    t.error = "the GPU runtime reported an error: " + launch;
  else if (!sync.empty())
    t.error = "the GPU runtime reported an error: " + sync;
  else if (!stop.empty())
    t.error = stop;
  if (!t.error.empty())
    return t;
  auto event = elapsed_ns(api, 0, 1);
  if (!event) {
    t.error = render(event.error());
    return t;
  }
  t.event_ns = *event;
  return t;
}

caf::expected<std::vector<gpu_set>> make_sets(
  const gpu_context& ctx, const problem& p, uint64_t workload_seed) {
  std::vector<gpu_set> sets;
  for (size_t s = 0; s < input_sets; ++s) {
    gpu_set set;
    set.inputs = p.make_inputs(
      input_style::random, derive_seed(workload_seed, set_stream + s));
    for (auto* d : {&set.baseline, &set.candidate}) {
      auto buffers = device_problem::make(*ctx.api, p);
      if (!buffers)
        return std::move(buffers.error());
      *d = std::move(*buffers);
      if (auto why = d->upload(set.inputs); !why.empty())
        return make_error(error::runner_failed, why);
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

/// Draws every freely drawn floating input of the set anew, by a kernel,
/// in both kernels' buffers alike: a kernel that kept a set's inputs and
/// outputs from an earlier round finds no element it could reuse.
std::string redraw(const problem& p, gpu_set& set, secret_rng& gen) {
  auto seed = gen.next();
  for (auto* d : {&set.baseline, &set.candidate})
    if (auto why = d->redraw(p, seed); !why.empty())
      return why;
  set.seed = seed;
  return {};
}

/// The default floating-point environment while it lives, the one it found
/// after: a kernel in the runner's process may leave a rounding mode or
/// flush-to-zero set, under which the host would draw otherwise than the
/// device.
class default_fp_env {
public:
  default_fp_env() {
    std::fegetenv(&saved_);
    std::fesetenv(FE_DFL_ENV);
  }
  ~default_fp_env() {
    std::fesetenv(&saved_);
  }
  default_fp_env(const default_fp_env&) = delete;
  default_fp_env& operator=(const default_fp_env&) = delete;

private:
  std::fenv_t saved_;
};

/// Passed if `seen`, one kernel's copy of the set's inputs (downloaded),
/// is what the harness drew for the set's last round; else `incorrect`
/// with the first element that differs. The host draws the round's inputs
/// again from its seed (problem::redraw draws what the device's fill
/// draws, bit for bit: check_device_fill); the inputs it does not redraw
/// (integers, structured ones) must still hold their first draw. Comparing
/// the two kernels' copies cannot see a change made to both alike: a
/// kernel that rewrote the baseline's inputs as well as its own, and
/// computed on what it wrote, passed every check before.
check_outcome inputs_as_drawn(const problem& p, gpu_set& set,
  const std::vector<std::vector<std::byte>>& seen, const char* whose) {
  if (set.host_seed != set.seed) {
    default_fp_env env;
    p.redraw(set.inputs, set.seed);
    set.host_seed = set.seed;
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    const auto& want = set.inputs[i];
    if (seen[i].size() != want.bytes())
      return {eval_status::runtime_error,
        "input " + std::to_string(i) + " was read back with "
          + std::to_string(seen[i].size()) + " bytes, not "
          + std::to_string(want.bytes())};
    auto at = std::mismatch(seen[i].begin(), seen[i].end(),
      static_cast<const std::byte*>(want.data()));
    if (at.first == seen[i].end())
      continue;
    const auto& t = p.inputs()[i];
    auto index
      = static_cast<size_t>(at.first - seen[i].begin()) / size_of(t.type);
    return {eval_status::incorrect,
      "input mutated: " + element_name(t.name, t.shape, index) + " in " + whose
        + " no longer holds what the harness drew for the round"};
  }
  return {};
}

/// Compares `count` elements of output `o` from `from` on with the
/// baseline's, at twice the output's tolerances; "" or the failure. The
/// whole output (`from` 0, all its elements) gets every rule; a sample
/// only the element-wise ones.
std::string compare_range(const problem& p, size_t o,
  const guarded_bytes& cand, const guarded_bytes& base, size_t from,
  size_t count) {
  const auto& t = p.outputs()[o];
  auto size = size_of(t.type);
  const void* got
    = static_cast<const std::byte*>(output_part(cand)) + from * size;
  const void* want
    = static_cast<const std::byte*>(output_part(base)) + from * size;
  auto cmp
    = count == t.elements
        ? compare_outputs(t.type, got, want, count, t.tol.between_outputs())
        : compare_elements(t.type, got, want, count, t.tol.between_outputs());
  if (cmp.ok)
    return {};
  return "output differs from the baseline's on the same inputs: "
         + describe(cmp, p.element_name(o, from + cmp.index));
}

/// Compares the round's candidate outputs with the baseline's: every
/// element (`all`), or a random subset of each output. Leaves the
/// candidate's outputs, downloaded, in `cand`.
std::string check_round(const problem& p, const gpu_set& set, secret_rng& gen,
  bool all, std::vector<guarded_bytes>& cand) {
  std::vector<guarded_bytes> base;
  for (auto why : {set.baseline.download(base), set.candidate.download(cand)})
    if (!why.empty())
      return why;
  for (size_t o = 0; o < cand.size(); ++o) {
    const auto& t = p.outputs()[o];
    if (!guard_zones_intact(t.type, cand[o]))
      return "wrote outside its output buffer '" + t.name + "'";
    if (all) {
      if (auto why = compare_range(p, o, cand[o], base[o], 0, t.elements);
          !why.empty())
        return why;
      continue;
    }
    for (size_t i = 0; i < std::min(t.elements, checked_elements); ++i)
      if (auto why
          = compare_range(p, o, cand[o], base[o], gen.below(t.elements), 1);
          !why.empty())
        return why;
  }
  return {};
}

/// Offers the round's candidate outputs (`cand`, downloaded) to the timed
/// sample. A round it keeps is kept with the baseline's copy of the
/// inputs, which must equal the candidate's: a kernel that wrote into its
/// inputs in a timed call is caught there.
check_outcome offer(const problem& p, gpu_set& set,
  const std::vector<guarded_bytes>& cand, timed_sample& sample,
  secret_rng& gen) {
  auto slot = sample.draw(gen);
  if (!slot)
    return {};
  std::vector<std::vector<std::byte>> inputs;
  std::vector<std::vector<std::byte>> seen;
  for (auto why : {set.baseline.download_inputs(p, inputs),
         set.candidate.download_inputs(p, seen)})
    if (!why.empty())
      return {eval_status::runtime_error, why};
  if (inputs != seen)
    return {eval_status::incorrect,
      "input mutated: the kernel wrote into its input buffers in a timed "
      "call"};
  if (auto drawn = inputs_as_drawn(p, set, inputs, "both kernels' buffers");
      drawn.status != eval_status::passed)
    return drawn;
  std::vector<const void*> in;
  for (const auto& b : inputs)
    in.push_back(b.data());
  std::vector<const void*> out;
  for (const auto& o : cand)
    out.push_back(output_part(o));
  sample.keep(*slot, in.data(), out.data());
  return {};
}

/// Compares both kernels' copies of a used set's inputs with what the
/// harness drew for its last round, once the timing is over: a change that
/// lasted to the end is seen whatever the secret sample drew, also with
/// `reference_samples` 0.
check_outcome inputs_at_end(const problem& p, gpu_set& set) {
  std::vector<std::vector<std::byte>> seen;
  for (auto [d, whose] : {std::pair{&set.baseline, "the baseline's buffers"},
         std::pair{&set.candidate, "the candidate's buffers"}}) {
    if (auto why = d->download_inputs(p, seen); !why.empty())
      return {eval_status::runtime_error, why};
    if (auto drawn = inputs_as_drawn(p, set, seen, whose);
        drawn.status != eval_status::passed)
      return drawn;
  }
  return {};
}

/// Median of `xs` (copied).
double median_of(std::vector<int64_t> xs) {
  std::sort(xs.begin(), xs.end());
  return xs.empty() ? 0 : static_cast<double>(xs[xs.size() / 2]);
}

/// Each kernel's timed calls as the host saw them: one entry per call.
struct host_view {
  std::vector<int64_t> wall;
};

/// The host's view of both kernels' timed calls.
struct host_views {
  const host_view& baseline;
  const host_view& candidate;
};

timing_outcome verify_timed(const gpu_context& ctx, const workload& w,
  const problem& p, std::vector<gpu_set>& sets, secret_rng& gen,
  host_views host, const timed_sample& sample, timing_outcome result);

} // namespace

timing_outcome time_gpu_workload(
  const gpu_context& ctx, const workload& w, uint64_t workload_seed) {
  timing_outcome result;
  auto fail = [&](eval_status status, std::string why) {
    result.status = status;
    result.detail = "workload " + w.name + ", timing: " + std::move(why);
    return std::move(result);
  };
  auto p = problem_of(ctx, w);
  const auto& dims = p.dims();
  result.set_bytes = p.set_bytes();
  auto sets = make_sets(ctx, p, workload_seed);
  if (!sets)
    return fail(eval_status::runtime_error, render(sets.error()));
  result.input_sets = static_cast<uint32_t>(sets->size());
  // Each round's redraw seed, order and compared elements: unpredictable
  // by the kernel (secrets.hpp).
  secret_rng gen;
  for (uint32_t i = 0; i < ctx.timing.warmup; ++i) {
    auto& set = (*sets)[i % sets->size()];
    for (auto [fn, d] : {std::pair{ctx.baseline, &set.baseline},
           std::pair{ctx.candidate, &set.candidate}})
      if (auto t = time_one(ctx, fn, *d, dims, 0); !t.error.empty())
        return fail(eval_status::runtime_error, "warm-up: " + t.error);
  }
  host_view baseline;
  host_view candidate;
  // A set's inputs and outputs, copied, per call kept: a few of them in
  // what the host may spend.
  timed_sample sample{p, sample_slots(ctx.timing.reference_samples,
                           result.set_bytes, uint64_t{1} << 30)};
  std::vector<guarded_bytes> cand_out;
  stopping_rule rule{ctx.timing};
  // The last PID the runner's namespace gave: every thread or process
  // started in a round moves it, even one that ended before left_running
  // looked.
  const auto pids_before = last_pid_given();
  auto start = std::chrono::steady_clock::now();
  for (size_t round = 0; round < max_rounds; ++round) {
    auto& set = (*sets)[round % sets->size()];
    if (auto why = redraw(p, set, gen); !why.empty())
      return fail(eval_status::runtime_error, why);
    set.used = true;
    auto flush_value = static_cast<uint8_t>(round);
    bool candidate_first = (gen.next() & 1) != 0;
    timed_call base;
    timed_call cand;
    if (candidate_first)
      cand = time_one(ctx, ctx.candidate, set.candidate, dims, flush_value);
    base = time_one(ctx, ctx.baseline, set.baseline, dims, flush_value);
    if (!candidate_first)
      cand = time_one(ctx, ctx.candidate, set.candidate, dims, flush_value);
    for (const auto* t : {&base, &cand})
      if (!t->error.empty())
        return fail(eval_status::runtime_error, t->error);
    // Every round, not only at the end: a thread of the kernel's that
    // launches work while the baseline is timed, and then ends, is seen
    // while it runs (review of the GPU harness).
    if (auto why = left_running(ctx); !why.empty())
      return fail(eval_status::rejected, why);
    if (auto why = started_within_round(pids_before); !why.empty())
      return fail(eval_status::rejected, why);
    if (auto why = check_round(p, set, gen, false, cand_out); !why.empty())
      return fail(eval_status::incorrect, why);
    if (auto kept = offer(p, set, cand_out, sample, gen);
        kept.status != eval_status::passed)
      return fail(kept.status, kept.detail);
    result.baseline_ns.push_back(base.event_ns);
    result.candidate_ns.push_back(cand.event_ns);
    result.candidate_wall_ns += cand.span_ns;
    result.candidate_cpu_ns += cand.cpu_ns;
    baseline.wall.push_back(base.wall_ns);
    candidate.wall.push_back(cand.wall_ns);
    auto elapsed
      = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
    if (rule.done(cand.event_ns, elapsed))
      break;
  }
  return verify_timed(
    ctx, w, p, *sets, gen, {baseline, candidate}, sample, std::move(result));
}

namespace {

timing_outcome verify_timed(const gpu_context& ctx, const workload& w,
  const problem& p, std::vector<gpu_set>& sets, secret_rng& gen,
  host_views host, const timed_sample& sample, timing_outcome result) {
  auto fail = [&](eval_status status, std::string why) {
    result.status = status;
    result.detail = "workload " + w.name + ", timed calls: " + std::move(why);
    return std::move(result);
  };
  // Threads and child processes: checked after every round (the last
  // just now).
  if (shows_hidden_threads(result.candidate_cpu_ns, result.candidate_wall_ns,
        result.candidate_ns.size()))
    return fail(eval_status::rejected,
      "hidden threads: " + std::to_string(result.candidate_cpu_ns)
        + " ns of CPU time in " + std::to_string(result.candidate_wall_ns)
        + " ns of wall time");
  if (auto why = outside_stream_work(
        median_of(result.candidate_ns), median_of(host.candidate.wall));
      !why.empty())
    return fail(eval_status::rejected, why);
  std::vector<guarded_bytes> cand;
  for (auto& set : sets) {
    if (!set.used)
      continue;
    if (auto why = check_round(p, set, gen, true, cand); !why.empty())
      return fail(eval_status::incorrect, why);
    if (auto end = inputs_at_end(p, set); end.status != eval_status::passed)
      return fail(end.status, end.detail);
  }
  if (auto why = sample.check(p, ctx.reference, ctx.reference_code);
      !why.empty())
    return fail(eval_status::incorrect, why);
  auto overhead = host_overhead_ns(result.baseline_ns, host.baseline.wall);
  result.baseline_ns
    = charged_ns(result.baseline_ns, host.baseline.wall, overhead);
  result.candidate_ns
    = charged_ns(result.candidate_ns, host.candidate.wall, overhead);
  return result;
}

} // namespace

std::string outside_stream_work(double events_ns, double wall_ns) {
  if (events_ns + outside_stream_slack_ns >= 0.5 * wall_ns)
    return {};
  auto ns = [](double x) {
    return std::to_string(static_cast<int64_t>(x));
  };
  return "work outside the timed stream: the events saw " + ns(events_ns)
         + " ns but the call took " + ns(wall_ns)
         + " ns until the device was idle (medians)";
}

double host_overhead_ns(
  const std::vector<int64_t>& events_ns, const std::vector<int64_t>& wall_ns) {
  std::vector<int64_t> beyond;
  for (size_t i = 0; i < std::min(events_ns.size(), wall_ns.size()); ++i)
    beyond.push_back(wall_ns[i] - events_ns[i]);
  return std::max(0.0, median_of(std::move(beyond)));
}

std::vector<int64_t> charged_ns(const std::vector<int64_t>& events_ns,
  const std::vector<int64_t>& wall_ns, double overhead_ns) {
  std::vector<int64_t> charged = events_ns;
  for (size_t i = 0; i < std::min(events_ns.size(), wall_ns.size()); ++i)
    charged[i] = std::max(events_ns[i],
      static_cast<int64_t>(std::llround(wall_ns[i] - overhead_ns)));
  return charged;
}

} // namespace eat::devices
