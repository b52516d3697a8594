// The timing phase of one workload (BENCHMARK-PROTOCOL.md section 3).

#include <algorithm>
#include <chrono>
#include <cmath>

#include "devices/kinds/problem.hpp"
#include "devices/runner/checks.hpp"
#include "devices/runner/harness.hpp"
#include "devices/runner/interrupts.hpp"
#include "devices/runner/kernel_host.hpp"
#include "devices/runner/run_delay.hpp"
#include "devices/runner/secrets.hpp"
#include "devices/runner/timed_sample.hpp"
#include "devices/runner/timing_sets.hpp"
#include "devices/stats.hpp"
#include "devices/stopping_rule.hpp"

namespace eat::devices {

namespace {

/// Rounds past this count stop a workload whatever the other rules say
/// (bounds the reply at a few MiB for kernels of a microsecond).
constexpr size_t max_rounds = 100'000;

struct timed_call {
  /// The sample: the steady clock around the call.
  int64_t wall_ns;
  /// Process CPU time, read just outside the sample.
  int64_t cpu_ns;
  /// Wall time from before the first CPU-time read to after the second:
  /// the interval cpu_ns covers, which the hidden-thread gate compares it
  /// with (a stall of the machine between a CPU-time read and the sample
  /// would otherwise count as CPU time without wall time).
  int64_t span_ns;
  /// With kernel processes: why the call failed, or "".
  std::string error;
  /// The part of wall_ns in which other tasks had the core
  /// (devices/runner/run_delay.hpp), which the sample leaves out.
  int64_t others_ns = 0;
  eval_status status = eval_status::passed;
  /// Watched calls (interrupts.hpp): the interrupts on the device's core
  /// between reads just outside the call (-1: not counted), and the wall
  /// time between those reads.
  int64_t interrupts = -1;
  int64_t interrupts_window_ns = 0;
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

/// The interrupts `watch` counts around `call()`, which returns a
/// timed_call or a host_call, put in `into` (nothing without a watch). A
/// count is taken somewhere within its read: the window runs from the
/// middle of the first read to the middle of the second.
template<class Call>
auto count_interrupts(
  const interrupt_counter* watch, timed_call& into, const Call& call) {
  if (watch == nullptr)
    return call();
  auto a0 = now_ns();
  auto n0 = watch->read();
  auto b0 = now_ns();
  auto result = call();
  auto a1 = now_ns();
  auto n1 = watch->read();
  auto b1 = now_ns();
  into.interrupts_window_ns = (a1 + b1) / 2 - (a0 + b0) / 2;
  into.interrupts = n0 >= 0 && n1 >= n0 ? n1 - n0 : -1;
  return result;
}

uint64_t keyed_inputs_hash(const harness_context& ctx, const input_set& set) {
  return keyed_hash(ctx.hash_key, set.inputs);
}

uint64_t keyed_outputs_hash(
  const harness_context& ctx, const kernel_outputs& out) {
  uint64_t h = 0;
  for (const auto& o : out.outs)
    h = h * 31
        + keyed_hash(ctx.hash_key, o.data(), o.size() * size_of(o.type()));
  return h;
}

/// Encrypts or decrypts the baseline's outputs of `set` (secrets.hpp),
/// which hold its contents of generation `generation`.
std::string mask_baseline(
  const harness_context& ctx, input_set& set, uint64_t generation) {
  for (auto& o : set.baseline_out.outs)
    if (auto why
        = mask_bytes(ctx.mask_key, reinterpret_cast<uintptr_t>(o.data()),
          static_cast<uint32_t>(generation), o.data(),
          o.size() * size_of(o.type()));
        !why.empty())
      return "cannot mask the baseline's outputs: " + why;
  return {};
}

/// Times one call in a kernel's own process, then checks with the keyed
/// hash that the set's inputs are still what the runner drew (the
/// candidate's process could have written any set's), and encrypts the
/// baseline's outputs, keeping their hash, which check_sets compares them
/// with.
timed_call time_in_process_of_its_own(const harness_context& ctx,
  kernel_role who, kernel_host& host, const problem& p, input_set& set,
  kernel_outputs& out, const interrupt_counter* watch) {
  timed_call counted;
  auto c = count_interrupts(watch, counted, [&] {
    return host.call(p, set.pointers.data(), out.pointers.data());
  });
  timed_call result{
    c.wall_ns, c.cpu_ns, c.wall_ns, std::move(c.error), c.others_ns};
  result.interrupts = counted.interrupts;
  result.interrupts_window_ns = counted.interrupts_window_ns;
  if (!result.error.empty()) {
    result.status = c.status;
    return result;
  }
  if (keyed_inputs_hash(ctx, set) != set.inputs_hash) {
    result.status = eval_status::incorrect;
    result.error = "input mutated: the inputs of a timed call changed "
                   "between the runner's drawing them and the call's end";
    return result;
  }
  if (who == kernel_role::baseline) {
    if (auto why = mask_baseline(ctx, set, set.generation); !why.empty()) {
      result.status = eval_status::runtime_error;
      result.error = std::move(why);
      return result;
    }
    set.baseline_out_hash = keyed_outputs_hash(ctx, out);
  } else {
    set.candidate_out_hash = keyed_outputs_hash(ctx, out);
  }
  return result;
}

/// Times one call in the runner's process with the steady clock, compiler
/// barriers keeping the call inside the timed region.
timed_call time_here(const harness_context& ctx, kernel_role who,
  const problem& p, input_set& set, kernel_outputs& out) {
  void* fn = who == kernel_role::baseline ? ctx.baseline : ctx.candidate;
  const auto* sched = ctx.caller_sched;
  auto s0 = std::chrono::steady_clock::now();
  auto cpu0 = process_cpu_ns();
  auto own0 = sched != nullptr ? other_cpu_now() : other_cpu{};
  auto sched0 = sched != nullptr ? sched->read() : sched_reading{};
  auto t0 = std::chrono::steady_clock::now();
  asm volatile("" ::: "memory");
  p.call(fn, set.pointers.data(), out.pointers.data());
  asm volatile("" ::: "memory");
  auto t1 = std::chrono::steady_clock::now();
  auto sched1 = sched != nullptr ? sched->read() : sched_reading{};
  auto own1 = sched != nullptr ? other_cpu_now() : other_cpu{};
  auto cpu1 = process_cpu_ns();
  auto s1 = std::chrono::steady_clock::now();
  auto ns = [](auto d) {
    return static_cast<int64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  };
  auto wall = ns(t1 - t0);
  // The most the kernel's other threads and processes can have run
  // (other_cpu_now); unreadable, the whole call.
  auto own_ns
    = own0.error.empty() && own1.error.empty() ? own1.most - own0.least : wall;
  return {wall, cpu1 - cpu0, ns(s1 - s0), {},
    std::min(wall, others_time_ns(sched0, sched1, own_ns))};
}

/// Poisons `out` (and with `flush`, evicts the set's inputs from the
/// caches), then times one call, counting the interrupts around it with
/// `watch` if set.
timed_call time_one(const harness_context& ctx, kernel_role who,
  const problem& p, input_set& set, kernel_outputs& out, bool flush,
  const interrupt_counter* watch = nullptr) {
  out.poison_data();
  if (flush)
    flush_inputs(set);
  if (auto* host
      = who == kernel_role::baseline ? ctx.baseline_host : ctx.candidate_host)
    return time_in_process_of_its_own(ctx, who, *host, p, set, out, watch);
  timed_call counted;
  auto call = count_interrupts(watch, counted, [&] {
    return time_here(ctx, who, p, set, out);
  });
  call.interrupts = counted.interrupts;
  call.interrupts_window_ns = counted.interrupts_window_ns;
  return call;
}

/// One paired round: times baseline and candidate once each, on the sets
/// the schedule gives them (timing_sets.hpp), in an order drawn from `gen`,
/// counting the interrupts around each call with `watch` if set.
/// Returns {baseline, candidate}.
std::pair<timed_call, timed_call> run_round(const harness_context& ctx,
  const problem& p, std::vector<input_set>& sets, size_t round, bool flush,
  secret_rng& gen, const interrupt_counter* watch) {
  auto which = ctx.candidate_host != nullptr
                 ? sets_of_drawn_round(round, sets.size())
                 : sets_of_round(round, sets.size());
  auto& base_set = sets[which.baseline];
  auto& cand_set = sets[which.candidate];
  auto baseline = [&] {
    base_set.baseline_generation = base_set.generation;
    return time_one(ctx, kernel_role::baseline, p, base_set,
      base_set.baseline_out, flush, watch);
  };
  auto candidate = [&] {
    cand_set.candidate_generation = cand_set.generation;
    return time_one(ctx, kernel_role::candidate, p, cand_set,
      cand_set.candidate_out, flush, watch);
  };
  if ((gen.next() & 1) != 0) {
    auto cand = candidate();
    return {baseline(), cand};
  }
  auto base = baseline();
  return {base, candidate()};
}

/// Returns why `set`'s candidate outputs are wrong, or "". With kernel
/// processes, both kernels' outputs must first be what their calls left;
/// the baseline's are decrypted for the comparison, while the candidate's
/// process waits, and encrypted again.
std::string check_one(
  const harness_context& ctx, const problem& p, input_set& set) {
  if (ctx.candidate_host == nullptr)
    return check_set(p, set);
  if (set.candidate_generation != 0
      && keyed_outputs_hash(ctx, set.candidate_out) != set.candidate_out_hash)
    return "the candidate's outputs changed after its call had returned";
  if (set.baseline_generation == 0)
    return check_set(p, set);
  if (keyed_outputs_hash(ctx, set.baseline_out) != set.baseline_out_hash)
    return "the baseline's outputs changed after its call (only the "
           "candidate's process could write them)";
  if (auto failed = mask_baseline(ctx, set, set.baseline_generation);
      !failed.empty())
    return failed;
  auto why = check_set(p, set);
  if (auto failed = mask_baseline(ctx, set, set.baseline_generation);
      !failed.empty())
    return failed;
  return why;
}

std::string check_sets(
  const harness_context& ctx, const problem& p, std::vector<input_set>& sets) {
  for (auto& set : sets)
    if (auto why = check_one(ctx, p, set); !why.empty())
      return why;
  return {};
}

/// Offers `set`'s candidate outputs to the timed sample once they belong
/// to its current contents (those it is about to lose to a redraw, or the
/// last ones). With kernel processes, the inputs kept must still be what
/// the runner drew: the candidate's process could have written them since.
std::string offer(const harness_context& ctx, input_set& set,
  timed_sample& sample, secret_rng& gen) {
  if (set.candidate_generation != set.generation
      || set.offered_generation == set.generation)
    return {};
  set.offered_generation = set.generation;
  auto slot = sample.draw(gen);
  if (!slot)
    return {};
  if (ctx.candidate_host != nullptr
      && keyed_inputs_hash(ctx, set) != set.inputs_hash)
    return "input mutated: the inputs of a timed call changed after the "
           "runner drew them";
  std::vector<const void*> outputs;
  for (const auto& o : set.candidate_out.outs)
    outputs.push_back(o.data());
  sample.keep(*slot, set.pointers.data(), outputs.data());
  return {};
}

/// check_sets, then offers every set to the timed sample.
std::string check_and_offer(const harness_context& ctx, const problem& p,
  std::vector<input_set>& sets, timed_sample& sample, secret_rng& gen) {
  if (auto why = check_sets(ctx, p, sets); !why.empty())
    return why;
  for (auto& set : sets)
    if (auto why = offer(ctx, set, sample, gen); !why.empty())
      return why;
  return {};
}

/// Keeps each set's keyed input hash (after drawing or redrawing).
void rehash_inputs(const harness_context& ctx, std::vector<input_set>& sets) {
  for (auto& set : sets)
    set.inputs_hash = keyed_inputs_hash(ctx, set);
}

/// Takes the median round trip of an empty call off every sample (never
/// below 1 ns), and records it.
void take_off_overhead(
  timing_outcome& result, const std::vector<double>& empty_ns) {
  auto overhead = static_cast<int64_t>(median(empty_ns));
  result.call_overhead_ns = overhead;
  for (auto* samples : {&result.baseline_ns, &result.candidate_ns})
    for (auto& x : *samples)
      x = std::max<int64_t>(1, x - overhead);
}

/// With kernel processes: each timed call's CPU time beyond its sample,
/// per kernel (early_end_text).
struct beyond_samples {
  std::vector<double> baseline;
  std::vector<double> candidate;
};

/// What verify_timed checks the timed outputs with.
struct output_checks {
  timed_sample& sample;
  secret_rng& gen;
};

/// Checks what the timed calls left behind: processes, threads, the CPU
/// time gate, guard zones, the outputs of the last (partial) block, then
/// the timed sample against the reference. `other` is other_cpu_now()
/// before the warm-up.
timing_outcome verify_timed(const harness_context& ctx, const problem& p,
  const workload& w, std::vector<input_set>& sets, const other_cpu& other,
  const beyond_samples& beyond, output_checks outputs, timing_outcome result);

} // namespace

timing_outcome time_workload(
  const harness_context& ctx, const workload& w, uint64_t workload_seed) {
  timing_outcome result;
  auto p = problem::make(*ctx.k, w, ctx.tol);
  result.set_bytes = p.set_bytes();
  auto sets = make_sets(p,
    set_count(rotation_span(ctx.rotation), ctx.memory_budget, result.set_bytes,
      set_footprint(p)),
    workload_seed);
  result.input_sets = static_cast<uint32_t>(sets.size());
  const bool hosted = ctx.candidate_host != nullptr;
  auto flush
    = flushes_timed_calls(ctx.rotation, sets.size(), result.set_bytes, hosted);
  if (hosted)
    rehash_inputs(ctx, sets);
  auto fail = [&](eval_status status, std::string why) {
    result.status = status;
    result.detail = "workload " + w.name + ", timed calls: " + std::move(why);
    return std::move(result);
  };
  if (hosted)
    for (auto* host : {ctx.baseline_host, ctx.candidate_host})
      if (auto mapped = host->map_arena(); !mapped.error.empty())
        return fail(eval_status::runtime_error, std::move(mapped.error));
  auto other = other_cpu_now();
  // The baseline's last warm-up call: how long its calls take.
  int64_t baseline_call_ns = 0;
  for (uint32_t i = 0; i < ctx.timing.warmup; ++i) {
    auto& set = sets[i % sets.size()];
    for (auto [who, out] : {std::pair{kernel_role::baseline, &set.baseline_out},
           std::pair{kernel_role::candidate, &set.candidate_out}}) {
      auto call = time_one(ctx, who, p, set, *out, false);
      if (!call.error.empty())
        return fail(call.status, std::move(call.error));
      if (who == kernel_role::baseline)
        baseline_call_ns = call.wall_ns;
    }
  }
  // Each round's redraw seed and order: unpredictable (secrets.hpp).
  secret_rng gen;
  timed_sample sample{p, sample_slots(ctx.timing.reference_samples,
                           result.set_bytes, ctx.memory_budget / 4)};
  stopping_rule rule{ctx.timing};
  std::vector<double> empty_ns;
  beyond_samples beyond;
  // In a secret share of the rounds (all but where the baseline's calls
  // are short) both calls have their interrupts counted (interrupts.hpp).
  interrupt_watch interrupts{ctx.interrupts};
  const double watched
    = interrupts.counter() == nullptr ? 0.0
      : ctx.timing.warmup == 0
        ? 1.0
        : watched_fraction(baseline_call_ns, interrupts.counter()->read_ns());
  auto start = std::chrono::steady_clock::now();
  interrupts.start(now_ns());
  for (size_t round = 0; round < max_rounds; ++round) {
    if (hosted) {
      // The candidate's set of this round: checked, then drawn anew.
      auto& next = sets[round % sets.size()];
      if (auto why = check_one(ctx, p, next); !why.empty())
        return fail(eval_status::incorrect, std::move(why));
      if (auto why = offer(ctx, next, sample, gen); !why.empty())
        return fail(eval_status::incorrect, std::move(why));
      p.redraw(next.inputs, gen.next());
      ++next.generation;
      next.inputs_hash = keyed_inputs_hash(ctx, next);
    } else if (starts_block(round, sets.size())) {
      if (auto why = check_and_offer(ctx, p, sets, sample, gen); !why.empty())
        return fail(eval_status::incorrect, std::move(why));
      redraw_all(p, sets, gen);
    }
    const bool watch
      = watched >= 1
        || (watched > 0
            && static_cast<double>(gen.next() >> 11) * 0x1p-53 < watched);
    auto [base, cand] = run_round(
      ctx, p, sets, round, flush, gen, watch ? interrupts.counter() : nullptr);
    if (!ctx.timing.take_off_others)
      base.others_ns = cand.others_ns = 0;
    for (auto* call : {&base, &cand})
      if (!call->error.empty())
        return fail(call->status, std::move(call->error));
    if (hosted) {
      beyond.baseline.push_back(
        static_cast<double>(base.cpu_ns - base.wall_ns));
      beyond.candidate.push_back(
        static_cast<double>(cand.cpu_ns - cand.wall_ns));
      auto nothing = ctx.baseline_host->call_nothing();
      if (!nothing.error.empty())
        return fail(eval_status::runtime_error, std::move(nothing.error));
      if (!ctx.timing.take_off_others)
        nothing.others_ns = 0;
      empty_ns.push_back(
        static_cast<double>(nothing.wall_ns - nothing.others_ns));
    }
    result.baseline_ns.push_back(
      std::max<int64_t>(1, base.wall_ns - base.others_ns));
    result.candidate_ns.push_back(
      std::max<int64_t>(1, cand.wall_ns - cand.others_ns));
    result.baseline_others_ns += base.others_ns;
    result.candidate_others_ns += cand.others_ns;
    if (watch)
      interrupts.add(round,
        {base.interrupts, base.interrupts_window_ns, result.baseline_ns.back()},
        {cand.interrupts, cand.interrupts_window_ns,
          result.candidate_ns.back()});
    result.candidate_wall_ns += cand.span_ns;
    result.candidate_cpu_ns += cand.cpu_ns;
    auto elapsed
      = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
    if (rule.done(result.candidate_ns.back(), elapsed))
      break;
  }
  result.interrupts = interrupts.finish(now_ns());
  if (ctx.timing.take_off_interrupts)
    interrupts.take_off(result.interrupts,
      interrupts.probe_cost(result.interrupts), result.baseline_ns,
      result.candidate_ns);
  result = verify_timed(
    ctx, p, w, sets, other, beyond, {sample, gen}, std::move(result));
  if (hosted && result.status == eval_status::passed)
    take_off_overhead(result, empty_ns);
  return result;
}

namespace {

timing_outcome verify_timed(const harness_context& ctx, const problem& p,
  const workload& w, std::vector<input_set>& sets, const other_cpu& other,
  const beyond_samples& beyond, output_checks outputs, timing_outcome result) {
  auto fail = [&](eval_status status, std::string why) {
    result.status = status;
    result.detail = "workload " + w.name + ", timed calls: " + std::move(why);
    return std::move(result);
  };
  if (ctx.candidate_host != nullptr) {
    // The candidate's process cannot start processes, and its threads run
    // only within its calls: what it did between them is on its clock.
    if (auto why = idle_work_text(ctx); !why.empty())
      return fail(eval_status::rejected, std::move(why));
    std::vector<double> samples(
      result.candidate_ns.begin(), result.candidate_ns.end());
    if (auto why = early_end_text(beyond.candidate, beyond.baseline,
          samples.empty() ? 0.0 : median(samples));
        !why.empty())
      return fail(eval_status::rejected, std::move(why));
  } else {
    if (has_child_processes())
      return fail(eval_status::rejected, child_processes_text);
    if (auto n = thread_count(); n > 1)
      return fail(
        eval_status::rejected, "hidden threads: " + std::to_string(n - 1)
                                 + " extra thread(s) still running");
    const auto now = other_cpu_now();
    for (const auto* read : {&other, &now})
      if (!read->error.empty())
        return fail(eval_status::rejected, "hidden threads: " + read->error);
    if (auto why = hidden_work_text(other_cpu_between(other, now));
        !why.empty())
      return fail(eval_status::rejected, std::move(why));
  }
  if (shows_hidden_threads(result.candidate_cpu_ns, result.candidate_wall_ns,
        result.candidate_ns.size()))
    return fail(eval_status::rejected,
      "hidden threads: " + std::to_string(result.candidate_cpu_ns)
        + " ns of CPU time in " + std::to_string(result.candidate_wall_ns)
        + " ns of wall time");
  if (ctx.interrupts != nullptr)
    if (auto why
        = aimed_interrupts_text(result.interrupts, ctx.interrupts->core());
        !why.empty())
      return fail(eval_status::rejected, std::move(why));
  // Untimed, after the gates above: the baseline's calls do not count as
  // the candidate's CPU time.
  std::string failed_call;
  auto status = eval_status::runtime_error;
  complete_block(sets, [&](input_set& set) {
    if (!failed_call.empty())
      return;
    auto call
      = time_one(ctx, kernel_role::baseline, p, set, set.baseline_out, false);
    failed_call = std::move(call.error);
    status = call.status;
  });
  if (!failed_call.empty())
    return fail(status, std::move(failed_call));
  if (auto why = check_and_offer(ctx, p, sets, outputs.sample, outputs.gen);
      !why.empty())
    return fail(eval_status::incorrect, std::move(why));
  if (auto why = outputs.sample.check(p, ctx.reference, ctx.reference_code);
      !why.empty())
    return fail(eval_status::incorrect, std::move(why));
  return result;
}

} // namespace

} // namespace eat::devices
