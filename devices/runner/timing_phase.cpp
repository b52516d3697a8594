// The timing phase of one workload (BENCHMARK-PROTOCOL.md section 3).

#include <algorithm>
#include <chrono>
#include <cmath>

#include <sys/resource.h>

#include "devices/runner/checks.hpp"
#include "devices/runner/harness.hpp"

namespace eat::devices {

namespace {

/// Rounds past this count stop a workload whatever the other rules say
/// (bounds the reply at a few MiB for kernels of a microsecond).
constexpr size_t max_rounds = 100'000;

/// Seed streams of the input sets and of the round order.
constexpr uint64_t set_stream = 1'000'000;
constexpr uint64_t order_stream = 2'000'000;

/// One set of inputs with an output buffer for each kernel.
struct input_set {
  std::vector<std::vector<float>> inputs;
  std::vector<const float*> pointers;
  guarded_output baseline_out;
  guarded_output candidate_out;
  bool used = false;
};

struct timed_call {
  int64_t wall_ns;
  int64_t cpu_ns;
};

/// Returns the CPU time of the whole process (all threads). Not
/// CLOCK_PROCESS_CPUTIME_ID: once RLIMIT_CPU arms the process CPU timer,
/// Linux serves that clock from a tick-granular cache (measured here: 0.2 ms
/// reported for 13 ms of work), while getrusage sums the threads' precise
/// runtimes (microsecond resolution).
int64_t cpu_now_ns() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  auto us = (int64_t{usage.ru_utime.tv_sec} + usage.ru_stime.tv_sec) * 1'000'000
            + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
  return us * 1000;
}

/// Poisons `out`, then times one call with the steady clock, compiler
/// barriers keeping the call inside the timed region.
timed_call time_one(const harness_context& ctx, void* fn, input_set& set,
  guarded_output& out, const std::vector<int64_t>& dims) {
  out.poison_data();
  auto cpu0 = cpu_now_ns();
  auto t0 = std::chrono::steady_clock::now();
  asm volatile("" ::: "memory");
  ctx.k->call(fn, set.pointers.data(), out.data(), dims.data());
  asm volatile("" ::: "memory");
  auto t1 = std::chrono::steady_clock::now();
  auto cpu1 = cpu_now_ns();
  auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0);
  return {static_cast<int64_t>(wall.count()), cpu1 - cpu0};
}

/// Number of input sets: enough that together they exceed
/// `ctx.rotation_target` bytes, at least 2, within the memory budget.
size_t set_count(const harness_context& ctx, uint64_t set_bytes) {
  auto wanted = (ctx.rotation_target + set_bytes - 1) / set_bytes;
  auto affordable = std::max<uint64_t>(1, ctx.memory_budget / set_bytes);
  return static_cast<size_t>(
    std::min(std::max<uint64_t>(2, wanted), affordable));
}

std::vector<input_set> make_sets(const harness_context& ctx,
  const std::vector<int64_t>& dims, size_t count, uint64_t workload_seed) {
  auto sizes = ctx.k->sizes(dims);
  std::vector<input_set> sets;
  sets.reserve(count);
  for (size_t s = 0; s < count; ++s) {
    auto inputs = ctx.k->make_inputs(
      dims, input_style::random, derive_seed(workload_seed, set_stream + s));
    std::vector<const float*> pointers;
    for (const auto& buf : inputs)
      pointers.push_back(buf.data());
    sets.push_back(input_set{std::move(inputs), std::move(pointers),
      guarded_output{sizes.output}, guarded_output{sizes.output}, false});
  }
  return sets;
}

/// Changes one element of each input, so that no two calls ever see the
/// same contents and no result cache keyed on pointers or contents can hit.
void perturb(input_set& set, rng& gen) {
  for (auto& buf : set.inputs)
    buf[gen.below(buf.size())] = draw_value(input_style::random, gen);
}

/// Running mean and variance (Welford) of the candidate samples.
struct running_stats {
  uint64_t n = 0;
  double mean = 0;
  double m2 = 0;

  void add(double x) {
    ++n;
    auto delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
  }

  double relative_standard_error() const {
    if (n < 2 || mean == 0)
      return INFINITY;
    return std::sqrt(m2 / static_cast<double>(n - 1))
           / std::sqrt(static_cast<double>(n)) / mean;
  }
};

/// One paired round on `set`: perturb it, then time baseline and candidate
/// once each, in an order drawn from `gen`. Returns {baseline, candidate}.
std::pair<timed_call, timed_call> run_round(const harness_context& ctx,
  input_set& set, rng& gen, const std::vector<int64_t>& dims) {
  perturb(set, gen);
  set.used = true;
  auto baseline = [&] {
    return time_one(ctx, ctx.baseline, set, set.baseline_out, dims);
  };
  auto candidate = [&] {
    return time_one(ctx, ctx.candidate, set, set.candidate_out, dims);
  };
  if ((gen.next() & 1) != 0) {
    auto cand = candidate();
    return {baseline(), cand};
  }
  auto base = baseline();
  return {base, candidate()};
}

/// The stopping rule: the time cap, or enough samples and time with a
/// candidate mean that is known precisely enough.
bool sampling_done(
  const timing_options& t, const running_stats& stats, double elapsed) {
  if (elapsed >= t.max_time_s)
    return true;
  return stats.n >= t.min_samples && elapsed >= t.min_time_s
         && stats.relative_standard_error() < t.max_rel_se;
}

/// Checks what the timed calls left behind: threads, guard zones, the CPU
/// time gate and the outputs of the last round on each set.
timing_outcome verify_timed(const harness_context& ctx, const workload& w,
  const std::vector<int64_t>& dims, const std::vector<input_set>& sets,
  timing_outcome result);

} // namespace

timing_outcome time_workload(
  const harness_context& ctx, const workload& w, uint64_t workload_seed) {
  timing_outcome result;
  auto dims = ctx.k->dims(w);
  auto sizes = ctx.k->sizes(dims);
  uint64_t elements = 2 * sizes.output;
  for (auto n : sizes.inputs)
    elements += n;
  result.set_bytes = elements * sizeof(float);
  auto sets
    = make_sets(ctx, dims, set_count(ctx, result.set_bytes), workload_seed);
  result.input_sets = static_cast<uint32_t>(sets.size());
  for (uint32_t i = 0; i < ctx.timing.warmup; ++i) {
    auto& set = sets[i % sets.size()];
    time_one(ctx, ctx.baseline, set, set.baseline_out, dims);
    time_one(ctx, ctx.candidate, set, set.candidate_out, dims);
  }
  rng gen{derive_seed(workload_seed, order_stream)};
  running_stats stats;
  auto start = std::chrono::steady_clock::now();
  for (size_t round = 0; round < max_rounds; ++round) {
    auto [base, cand] = run_round(ctx, sets[round % sets.size()], gen, dims);
    result.baseline_ns.push_back(base.wall_ns);
    result.candidate_ns.push_back(cand.wall_ns);
    result.candidate_wall_ns += cand.wall_ns;
    result.candidate_cpu_ns += cand.cpu_ns;
    stats.add(static_cast<double>(cand.wall_ns));
    auto elapsed
      = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
    if (sampling_done(ctx.timing, stats, elapsed))
      break;
  }
  return verify_timed(ctx, w, dims, sets, std::move(result));
}

namespace {

timing_outcome verify_timed(const harness_context& ctx, const workload& w,
  const std::vector<int64_t>& dims, const std::vector<input_set>& sets,
  timing_outcome result) {
  auto fail = [&](eval_status status, std::string why) {
    result.status = status;
    result.detail = "workload " + w.name + ", timed calls: " + std::move(why);
    return std::move(result);
  };
  if (has_child_processes())
    return fail(eval_status::rejected, child_processes_text);
  if (auto n = thread_count(); n > 1)
    return fail(
      eval_status::rejected, "hidden threads: " + std::to_string(n - 1)
                               + " extra thread(s) still running");
  if (shows_hidden_threads(result.candidate_cpu_ns, result.candidate_wall_ns,
        result.candidate_ns.size()))
    return fail(eval_status::rejected,
      "hidden threads: " + std::to_string(result.candidate_cpu_ns)
        + " ns of CPU time in " + std::to_string(result.candidate_wall_ns)
        + " ns of wall time");
  // Both kernels saw the same inputs in a set's last round, so the baseline's
  // output is the expected value; each carries its own fp32 rounding, hence
  // the doubled tolerance.
  for (const auto& set : sets) {
    if (!set.candidate_out.zones_intact())
      return fail(eval_status::incorrect, "wrote outside its output buffer");
    if (!set.used)
      continue;
    auto cmp
      = compare_outputs(set.candidate_out.data(), set.baseline_out.data(),
        set.baseline_out.size(), 2 * ctx.atol, 2 * ctx.rtol);
    if (!cmp.ok)
      return fail(eval_status::incorrect,
        "output differs from the baseline's on the same inputs: "
          + describe(cmp, ctx.k->element_name(cmp.index, dims)));
  }
  return result;
}

} // namespace

} // namespace eat::devices
