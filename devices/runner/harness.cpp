#include "devices/runner/harness.hpp"
#include "devices/runner/entries.hpp"
#include "devices/runner/kernel_host.hpp"
#include "devices/runner/timing_sets.hpp"
#include "devices/stats.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>

#include <unistd.h>

namespace eat::devices {

namespace {

harness_context make_context(
  const runner_request& req, const kind& k, const loaded_entries& entries) {
  harness_context ctx;
  ctx.k = &k;
  ctx.reference = entries.reference;
  ctx.baseline = entries.baseline;
  ctx.candidate = entries.candidate;
  ctx.reference_code = entries.reference_code;
  ctx.tol = request_tolerance(req);
  ctx.deterministic = req.deterministic;
  ctx.timing = req.timing;
  ctx.memory_budget = (req.limits.address_space_mib << 20) / 4;
  ctx.rotation = plan_rotation(last_level_cache_bytes());
  if (req.kernel_processes) {
    ctx.rotation = kernel_process_rotation(ctx.rotation);
    ctx.hash_key = random_secret_key();
    ctx.mask_key = random_secret_key();
  }
  return ctx;
}

/// Has `ctx` count the interrupts on the device's core with `counter`
/// (interrupts.hpp), and `reply` say which, or why it cannot.
void count_interrupts_with(
  const interrupt_counter& counter, harness_context& ctx, runner_reply& reply) {
  if (!counter.is_open()) {
    reply.interrupts_not_counted = counter.why_not();
    return;
  }
  ctx.interrupts = &counter;
  reply.interrupt_sources.assign(
    counter.sources().begin(), counter.sources().end());
}

workload_report run_workload(
  const harness_context& ctx, const workload& w, uint64_t workload_seed) {
  return check_then_time(
    w.name, [&] { return check_workload(ctx, w, workload_seed); },
    [&] { return time_workload(ctx, w, workload_seed); });
}

/// Runs one workload, turning exceptions that escape the kernels or the
/// harness into a runtime_error report.
workload_report run_workload_safely(const harness_context& ctx,
  const workload& w, uint64_t workload_seed, uint64_t address_space_mib) {
  auto failed = [&](std::string why) {
    workload_report report;
    report.workload = w.name;
    report.status = eval_status::runtime_error;
    report.detail = "workload " + w.name + ": " + std::move(why);
    return report;
  };
  try {
    return run_workload(ctx, w, workload_seed);
  } catch (const std::bad_alloc&) {
    return failed("out of memory (address-space limit "
                  + std::to_string(address_space_mib) + " MiB)");
  } catch (const std::exception& ex) {
    return failed(std::string{"exception: "} + ex.what());
  } catch (...) {
    return failed("an exception of unknown type escaped");
  }
}

/// Runs every workload until one fails, completing `reply`; `counter`
/// (null: none, else ctx's) reads the interrupts' routes again before
/// each workload, and a workload is timed again where they changed during
/// its timing (run_with_routes), with a seed of its own.
runner_reply run_workloads(const runner_request& req,
  const harness_context& ctx, interrupt_counter* counter, runner_reply reply) {
  reply.status = eval_status::passed;
  const auto n = req.workloads.size();
  for (size_t i = 0; i < n; ++i) {
    reply.workloads.push_back(run_with_routes(
      ctx.interrupts != nullptr ? counter : nullptr, [&](int again) {
        return run_workload_safely(ctx, req.workloads[i],
          derive_seed(req.seed, again == 0 ? i : n + i),
          req.limits.address_space_mib);
      }));
    if (ctx.interrupts != nullptr)
      for (int source : counter->sources())
        if (std::find(reply.interrupt_sources.begin(),
              reply.interrupt_sources.end(), source)
            == reply.interrupt_sources.end())
          reply.interrupt_sources.push_back(source);
    const auto& report = reply.workloads.back();
    if (report.status != eval_status::passed) {
      reply.status = report.status;
      reply.detail = report.detail;
      return reply;
    }
  }
  return reply;
}

/// run_request with the baseline and the candidate in processes of their
/// own: only the reference is loaded here.
runner_reply run_in_kernel_processes(
  const runner_request& req, const kind& k, runner_reply reply) {
  auto fail = [&](eval_status status, std::string detail) {
    reply.status = status;
    reply.detail = std::move(detail);
    return std::move(reply);
  };
  reply.kernel_processes = true;
  // eat-runner makes the arena before its sandbox; a test calling
  // run_request directly gets one here.
  std::unique_ptr<shared_arena> own;
  auto* arena = installed_arena();
  if (arena == nullptr) {
    own = std::make_unique<shared_arena>(
      kernel_arena_bytes(req.limits.address_space_mib));
    if (!own->error().empty())
      return fail(eval_status::runtime_error,
        "cannot share memory with the kernels' processes: " + own->error());
    own->install();
    arena = own.get();
  }
  auto ref = load_entry(req.reference_so, k.reference_entry);
  if (!ref.fn)
    return fail(eval_status::rejected, "the task's reference " + ref.error);
  eval_status status = eval_status::passed;
  std::string why;
  auto baseline = kernel_host::start(
    *arena, req.baseline_so, k.entry, "baseline", status, why);
  if (!baseline)
    return fail(status, std::move(why));
  auto candidate = kernel_host::start(
    *arena, req.candidate_so, k.entry, "candidate", status, why);
  if (!candidate)
    return fail(status, std::move(why));
  loaded_entries entries;
  entries.reference = ref.fn;
  harness_context ctx;
  try {
    ctx = make_context(req, k, entries);
  } catch (const std::runtime_error& ex) {
    return fail(eval_status::runtime_error, ex.what());
  }
  ctx.baseline_host = baseline.get();
  ctx.candidate_host = candidate.get();
  for (const auto* host : {baseline.get(), candidate.get()})
    if (!host->schedstat_why_not().empty())
      reply.others_not_taken_off = host->schedstat_why_not();
  baseline->watch(candidate.get());
  candidate->watch(baseline.get());
  // Opened once the kernels' processes run: they inherit no descriptor.
  auto interrupts = interrupt_counter::of_core(req.core);
  count_interrupts_with(interrupts, ctx, reply);
  reply = run_workloads(req, ctx, &interrupts, std::move(reply));
  reply.candidate_idle_cpu_ns = candidate->idle_cpu_ns();
  reply.candidate_cpu_during_baseline_ns = candidate->during_other().cpu_ns;
  return reply;
}

/// What the candidate's process used between its calls. The runner waits
/// after each call until the process is back to waiting (0 ns between
/// calls measured since, kernel_host::settle); the baseline's process,
/// waiting the same way in the same run, measures what the operating
/// system still charges. Up to twice its rate a call, plus 1 ms and 1 % of
/// the candidate's CPU time in its calls, is allowed.
idle_figures figures_of(const kernel_host& host) {
  return {host.idle_cpu_ns(), host.largest_idle_ns(), host.calls(),
    host.call_cpu_ns()};
}

} // namespace

bool worked_between_calls(
  const idle_figures& candidate, const idle_figures& baseline) {
  auto per_call = baseline.calls == 0
                    ? 0.0
                    : static_cast<double>(baseline.idle_cpu_ns)
                        / static_cast<double>(baseline.calls);
  // 1 % of the calls' CPU time, the baseline's where the candidate's is
  // more: a red-team candidate burned 5 s in each untimed check call to
  // raise its allowance to 1.8 s, then precomputed 80 % of each timed
  // call's rows between calls (4.12x for the baseline's own softmax).
  auto calls_cpu = std::min(candidate.call_cpu_ns, baseline.call_cpu_ns);
  auto allowed = 1e6 + 2 * per_call * static_cast<double>(candidate.calls)
                 + static_cast<double>(calls_cpu) / 100;
  auto excused = std::min(candidate.largest_idle_ns, excused_gap_ns);
  return static_cast<double>(candidate.idle_cpu_ns - excused) > allowed;
}

size_t kernel_arena_bytes(uint64_t address_space_mib) {
  constexpr uint64_t unlimited_mib = 16 << 10;
  return (address_space_mib == 0 ? unlimited_mib : address_space_mib) << 19;
}

host_call call_kernel(const harness_context& ctx, kernel_role who,
  const problem& p, const void* const* inputs, void* const* outputs) {
  auto* host
    = who == kernel_role::baseline ? ctx.baseline_host : ctx.candidate_host;
  if (host == nullptr) {
    p.call(who == kernel_role::baseline ? ctx.baseline : ctx.candidate, inputs,
      outputs);
    return {};
  }
  return host->call(p, inputs, outputs);
}

bool worked_during_baseline(const during_other_calls& candidate) {
  auto allowed = 100'000 + static_cast<double>(candidate.wall_ns) / 200;
  auto excused = std::min(candidate.largest_ns, excused_gap_ns);
  return static_cast<double>(candidate.cpu_ns - excused) > allowed;
}

std::string early_end_text(std::vector<double> candidate,
  std::vector<double> baseline, double candidate_wall_ns) {
  if (candidate.empty() || baseline.empty())
    return {};
  auto cand = median(candidate);
  // The baseline's way back, where it shows one: its calls can also use
  // less CPU time than their samples (time the process waits in them, e.g.
  // for a VM's host), which allows the candidate nothing.
  auto base = median(baseline);
  if (cand <= std::max(base, 0.0) + 3'000 + 0.03 * candidate_wall_ns)
    return {};
  return "calls that end before their work: the candidate's process used a "
         "median "
         + std::to_string(static_cast<int64_t>(cand / 1000))
         + " us of CPU time a call beyond its sample (median sample "
         + std::to_string(static_cast<int64_t>(candidate_wall_ns / 1000))
         + " us), the baseline's "
         + std::to_string(static_cast<int64_t>(base / 1000))
         + " us (a kernel must return when its work is done)";
}

std::string idle_work_text(const harness_context& ctx) {
  const auto* host = ctx.candidate_host;
  if (host == nullptr)
    return {};
  const auto& during = host->during_other();
  const auto& control = ctx.baseline_host->during_other();
  if (worked_during_baseline(during))
    return "hidden work: the candidate's process used "
           + std::to_string(during.cpu_ns / 1000)
           + " us of CPU time while the baseline's "
           + std::to_string(during.calls) + " calls ran ("
           + std::to_string(during.wall_ns / 1'000'000) + " ms), in "
           + std::to_string(during.busy_calls) + " of them, up to "
           + std::to_string(during.largest_ns / 1000)
           + " us in one, against the baseline's process's "
           + std::to_string(control.cpu_ns / 1000)
           + " us during the candidate's calls (a kernel's process must "
             "wait while the other kernel runs)";
  if (!worked_between_calls(figures_of(*host), figures_of(*ctx.baseline_host)))
    return {};
  return "hidden work: the candidate's process used "
         + std::to_string(host->idle_cpu_ns() / 1000)
         + " us of CPU time between its " + std::to_string(host->calls())
         + " calls, in " + std::to_string(host->busy_gaps())
         + " of the gaps, up to "
         + std::to_string(host->largest_idle_ns() / 1000)
         + " us in one, against the baseline's "
         + std::to_string(ctx.baseline_host->idle_cpu_ns() / 1000) + " us in "
         + std::to_string(ctx.baseline_host->calls())
         + " (a kernel must do its work during the call)";
}

tolerance request_tolerance(const runner_request& req) {
  return {req.atol, req.rtol, req.matched_ratio, req.max_error};
}

check_outcome second_run(
  const check_outcome& again, const check_outcome& first) {
  check_outcome result = first;
  result.max_abs_error = std::max(first.max_abs_error, again.max_abs_error);
  result.max_rel_error = std::max(first.max_rel_error, again.max_rel_error);
  if (again.status != eval_status::passed) {
    result.status = again.status;
    result.detail = "second run on the same inputs (the task allows outputs "
                    "that differ from run to run, each within tolerance): "
                    + again.detail;
  }
  return result;
}

workload_report check_then_time(const std::string& name,
  const std::function<check_outcome()>& check,
  const std::function<timing_outcome()>& time) {
  workload_report report;
  report.workload = name;
  auto checked = check();
  report.status = checked.status;
  report.detail = std::move(checked.detail);
  report.max_abs_error = checked.max_abs_error;
  report.max_rel_error = checked.max_rel_error;
  if (report.status != eval_status::passed)
    return report;
  auto timed = time();
  report.status = timed.status;
  report.detail = std::move(timed.detail);
  report.baseline_ns = std::move(timed.baseline_ns);
  report.candidate_ns = std::move(timed.candidate_ns);
  report.candidate_cpu_ns = timed.candidate_cpu_ns;
  report.candidate_wall_ns = timed.candidate_wall_ns;
  report.input_sets = timed.input_sets;
  report.set_bytes = timed.set_bytes;
  report.call_overhead_ns = timed.call_overhead_ns;
  report.baseline_others_ns = timed.baseline_others_ns;
  report.candidate_others_ns = timed.candidate_others_ns;
  report.interrupts = timed.interrupts;
  return report;
}

runner_reply run_request(const runner_request& req) {
  runner_reply reply;
  reply.nonce = req.nonce;
  auto fail = [&](eval_status status, std::string detail) {
    reply.status = status;
    reply.detail = std::move(detail);
    return std::move(reply);
  };
  task_spec task;
  task.kind = req.kind;
  task.dtype = req.dtype;
  set_tolerance(task, request_tolerance(req));
  task.workloads = req.workloads;
  if (auto why = check_task(task); !why.empty())
    return fail(eval_status::rejected, std::move(why));
  const auto& k = *find_kind(req.kind);
  if (req.kernel_processes)
    return run_in_kernel_processes(req, k, std::move(reply));
  auto entries = load_entries(
    req.reference_so, k.reference_entry, req.baseline_so, req.candidate_so,
    k.entry);
  if (entries.status != eval_status::passed)
    return fail(entries.status, std::move(entries.detail));
  auto ctx = make_context(req, k, entries);
  auto sched = schedstat_file::of_this_thread();
  if (sched.is_open())
    ctx.caller_sched = &sched;
  else
    reply.others_not_taken_off = sched.why_not();
  auto interrupts = interrupt_counter::of_core(req.core);
  count_interrupts_with(interrupts, ctx, reply);
  return run_workloads(req, ctx, &interrupts, std::move(reply));
}

} // namespace eat::devices
