#include "devices/runner/harness.hpp"
#include "devices/runner/timing_sets.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <new>

#include <dlfcn.h>
#include <unistd.h>

namespace eat::devices {

namespace {

/// Bytes the input sets of one workload should exceed together, at least.
constexpr uint64_t min_rotation_bytes = uint64_t{32} << 20;

/// A shared object's entry point, or why it could not be had.
struct entry_lookup {
  void* fn = nullptr;
  std::string error;
};

entry_lookup load_entry(const std::string& path, const char* symbol) {
  // The handle is never closed: the runner exits after one request.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    return {nullptr, std::string{"cannot load: "} + ::dlerror()};
  ::dlerror();
  void* fn = ::dlsym(handle, symbol);
  if (fn == nullptr)
    return {nullptr, std::string{"does not define "} + symbol
                       + " (declare it extern \"C\" with the task's ABI)"};
  return {fn, {}};
}


/// Unlocks `code` when a kernel calls exit(): the atexit handler runs before
/// the dynamic linker's finalisers, which run the locked object's fini code.
void unlock_at_exit(const code_lock& code) {
  static code_lock saved;
  saved = code;
  static const bool registered
    = std::atexit([] { static_cast<void>(saved.unlock()); }) == 0;
  static_cast<void>(registered);
}

/// The three entry points, or the status and detail of why not.
struct loaded_entries {
  void* reference = nullptr;
  void* baseline = nullptr;
  void* candidate = nullptr;
  code_lock reference_code;
  eval_status status = eval_status::passed;
  std::string detail;
};

loaded_entries load_entries(const runner_request& req, const kind& k) {
  loaded_entries result;
  auto fail = [&](eval_status status, std::string detail) {
    result.status = status;
    result.detail = std::move(detail);
    return std::move(result);
  };
  auto ref = load_entry(req.reference_so, k.reference_entry);
  if (!ref.fn)
    return fail(eval_status::rejected, "the task's reference " + ref.error);
  auto base = load_entry(req.baseline_so, k.entry);
  if (!base.fn)
    return fail(eval_status::rejected, "the task's baseline " + base.error);
  result.reference_code = code_lock::of(ref.fn);
  unlock_at_exit(result.reference_code);
  if (auto why = result.reference_code.lock(); !why.empty())
    return fail(eval_status::runtime_error,
      "cannot lock the task's reference before loading the candidate: "
        + why);
  // Loading runs the candidate's static constructors: from here on, its
  // code runs inside the sandbox.
  auto cand = load_entry(req.candidate_so, k.entry);
  if (!cand.fn)
    return fail(eval_status::compile_error, "the candidate " + cand.error);
  result.reference = ref.fn;
  result.baseline = base.fn;
  result.candidate = cand.fn;
  return result;
}

harness_context make_context(
  const runner_request& req, const kind& k, const loaded_entries& entries) {
  harness_context ctx;
  ctx.k = &k;
  ctx.reference = entries.reference;
  ctx.baseline = entries.baseline;
  ctx.candidate = entries.candidate;
  ctx.reference_code = entries.reference_code;
  ctx.atol = req.atol;
  ctx.rtol = req.rtol;
  ctx.timing = req.timing;
  ctx.memory_budget = (req.limits.address_space_mib << 20) / 4;
  ctx.rotation_target
    = std::max(2 * last_level_cache_bytes(), min_rotation_bytes);
  return ctx;
}

workload_report run_workload(
  const harness_context& ctx, const workload& w, uint64_t workload_seed) {
  workload_report report;
  report.workload = w.name;
  auto checked = check_workload(ctx, w, workload_seed);
  report.status = checked.status;
  report.detail = std::move(checked.detail);
  report.max_abs_error = checked.max_abs_error;
  report.max_rel_error = checked.max_rel_error;
  if (report.status != eval_status::passed)
    return report;
  auto timed = time_workload(ctx, w, workload_seed);
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
  task.atol = req.atol;
  task.rtol = req.rtol;
  task.workloads = req.workloads;
  if (auto why = check_task(task); !why.empty())
    return fail(eval_status::rejected, std::move(why));
  const auto& k = *find_kind(req.kind);
  auto entries = load_entries(req, k);
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
