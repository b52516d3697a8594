#include "devices/runner/harness.hpp"
#include "devices/runner/entries.hpp"
#include "devices/runner/timing_sets.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <new>

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
  return ctx;
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

} // namespace

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
  auto entries = load_entries(
    req.reference_so, k.reference_entry, req.baseline_so, req.candidate_so,
    k.entry);
  if (entries.status != eval_status::passed)
    return fail(entries.status, std::move(entries.detail));
  auto ctx = make_context(req, k, entries);
  reply.status = eval_status::passed;
  for (size_t i = 0; i < req.workloads.size(); ++i) {
    reply.workloads.push_back(run_workload_safely(ctx, req.workloads[i],
      derive_seed(req.seed, i), req.limits.address_space_mib));
    const auto& report = reply.workloads.back();
    if (report.status != eval_status::passed)
      return fail(report.status, report.detail);
  }
  return reply;
}

} // namespace eat::devices
