#include "devices/gpu_runner/gpu_harness.hpp"
#include "actors/protocol/error.hpp"

#include <algorithm>
#include <exception>
#include <new>


#include "devices/runner/checks.hpp"
#include "devices/runner/entries.hpp"

namespace eat::devices {

namespace {

/// Smallest L2 flush buffer: larger than any L2 cache of today.
constexpr uint64_t min_flush_bytes = uint64_t{64} << 20;

/// Loads the three entry points into `ctx`; returns the failure, if any.
check_outcome load_into(gpu_context& ctx, const gpu_runner_request& req) {
  steady_heap_for_kernels();
  auto loaded = load_entries(req.reference_so, ctx.k->reference_entry,
    req.baseline_so, req.candidate_so, ctx.gk->entry);
  if (loaded.status != eval_status::passed)
    return {loaded.status, std::move(loaded.detail)};
  ctx.reference_code = loaded.reference_code;
  ctx.reference = loaded.reference;
  ctx.baseline = loaded.baseline;
  ctx.candidate = loaded.candidate;
  return {};
}

workload_report run_workload(
  gpu_context& ctx, const workload& w, uint64_t workload_seed) {
  return check_then_time(
    w.name, [&] { return check_gpu_workload(ctx, w, workload_seed); },
    [&] { return time_gpu_workload(ctx, w, workload_seed); });
}

workload_report run_workload_safely(
  gpu_context& ctx, const workload& w, uint64_t workload_seed) {
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
    return failed("out of host memory");
  } catch (const std::exception& ex) {
    return failed(std::string{"exception: "} + ex.what());
  } catch (...) {
    return failed("an exception of unknown type escaped");
  }
}

/// Uses once what every timed call uses besides the fill (checked before
/// this): the device-wide settings' restore, the persisting-L2 reset and
/// both events, recorded and read. Their first use so comes before any
/// kernel code loads and before the runtime's own threads are counted
/// (after the baseline's first call, gpu_check.cpp): a runtime that
/// started a thread as it first did one of them would not have it counted
/// against the candidate. "" or the failure.
std::string use_timing_calls_once(gpu_api& api) {
  if (auto why = api.restore_settings(); !why.empty())
    return why;
  if (auto why = api.reset_persisting_l2(); !why.empty())
    return why;
  // As in a timed call, the start event finds the device idle.
  if (auto why = api.synchronize(); !why.empty())
    return why;
  for (int event : {0, 1})
    if (auto why = api.record(event); !why.empty())
      return why;
  if (auto why = api.synchronize(); !why.empty())
    return why;
  if (auto ms = api.elapsed_ms(0, 1); !ms)
    return render(ms.error());
  return {};
}

/// The GPU's fill checked for every draw the timing of `req` will make.
std::string check_fill_for(
  gpu_api& api, const gpu_context& ctx, const gpu_runner_request& req) {
  std::vector<problem> problems;
  for (const auto& w : req.workloads)
    problems.push_back(problem_of(ctx, w));
  return check_device_fill(api, fill_cases(problems));
}

/// Opens the GPU, allocates the flush buffer, checks the GPU's fill and
/// makes the timing's other calls once, calls `before_loading` and loads
/// the kernels into `ctx`; returns the failure, if any.
check_outcome prepare_context(gpu_context& ctx, gpu_api& api,
  gpu_runner_request& req, gpu_runner_reply& reply,
  const before_loading_fn& before_loading) {
  if (req.backend != api.backend())
    return {eval_status::runtime_error, "a request for backend '" + req.backend
                                          + "' reached the " + api.backend()
                                          + " runner"};
  reply.visible_gpus = api.visible_count();
  if (req.only_gpu && reply.visible_gpus != 1)
    return {eval_status::runtime_error,
      "the runtime shows this runner " + std::to_string(reply.visible_gpus)
        + " GPUs where it was started to see only " + req.identity
        + " (its visible-devices variable did not restrict it; "
          "docs/harness.md, \"CUDA and HIP backends\")"};
  if (auto why = api.open(req.gpu); !why.empty())
    return {eval_status::runtime_error,
      "GPU " + std::to_string(req.gpu) + " is unavailable: " + why};
  auto id = api.identity();
  reply.gpu_name = id.name;
  if (!req.identity.empty() && req.identity != id.identity)
    return {eval_status::runtime_error, "GPU " + std::to_string(req.gpu)
                                          + " is " + id.identity
                                          + ", not the expected "
                                          + req.identity};
  reply.flush_bytes = flush_bytes_for(id.cache_bytes);
  auto flush = device_memory::make(api, reply.flush_bytes);
  if (!flush)
    return {eval_status::runtime_error,
      "cannot allocate the L2 flush buffer: " + render(flush.error())};
  ctx.flush = std::move(*flush);
  ctx.api = &api;
  ctx.tol = request_tolerance(req);
  if (auto why = check_fill_for(api, ctx, req); !why.empty())
    return {eval_status::runtime_error, std::move(why)};
  if (auto why = use_timing_calls_once(api); !why.empty())
    return {eval_status::runtime_error,
      "the GPU's timing calls failed before any kernel loaded: " + why};
  ctx.deterministic = req.deterministic;
  ctx.timing = req.timing;
  if (before_loading)
    if (auto why = before_loading(req); !why.empty())
      return {eval_status::runtime_error,
        "cannot switch to the kernel's user: " + why};
  return load_into(ctx, req);
}

/// Makes the reference's code executable again when a request is done, so
/// that a process calling the harness in-process (tests) can run the
/// object's destructors at exit; the runners _exit instead.
struct unlock_when_done {
  const code_lock& code;
  ~unlock_when_done() {
    code.unlock();
  }
};

} // namespace

uint64_t flush_bytes_for(uint64_t cache_bytes) {
  return std::max(2 * cache_bytes, min_flush_bytes);
}

uint64_t amd_infinity_cache_bytes(const std::string& arch) {
  // AMD's specifications: CDNA 3 (MI300A, MI300X, MI325X) and CDNA 4
  // (MI350X, MI355X) 256 MB; RDNA 2 - 4 by die, the largest model of each
  // (RX 7900 XTX for Navi 31: 96 MB, the XT 80 MB).
  static const std::pair<const char*, uint64_t> table[] = {{"gfx940", 256},
    {"gfx941", 256}, {"gfx942", 256}, {"gfx950", 256}, {"gfx1030", 128},
    {"gfx1031", 96}, {"gfx1032", 32}, {"gfx1034", 16}, {"gfx1100", 96},
    {"gfx1101", 64}, {"gfx1102", 32}, {"gfx1200", 32}, {"gfx1201", 64}};
  auto name = arch.substr(0, arch.find(':'));
  for (const auto& [gfx, mib] : table)
    if (name == gfx)
      return mib << 20;
  return 0;
}

void note_user_namespace(gpu_runner_reply& reply) {
  if (reply.status != eval_status::runtime_error || !reply.gpu_name.empty())
    return;
  reply.detail += " (the runner, not root, ran in a user namespace of its "
                  "own; if the GPU runtime cannot work in one, set "
                  "user_namespace = false in [devices.cuda] or "
                  "[devices.hip])";
}

problem problem_of(const gpu_context& ctx, const workload& w) {
  return problem::make(*ctx.k, w, ctx.tol);
}

std::string call_on_device(const gpu_context& ctx, void* fn,
  device_problem& buffers, const problem_dims& dims) {
  auto rc = ctx.gk->call(fn, buffers.inputs().data(), buffers.outputs().data(),
    dims.data(), ctx.api->stream());
  auto launch = ctx.api->call_error();
  if (rc != 0)
    return "the kernel returned error " + std::to_string(rc) + ": "
           + ctx.api->error_text(rc);
  if (!launch.empty())
    return "the GPU runtime reported an error: " + launch;
  if (auto why = ctx.api->synchronize(); !why.empty())
    return "the GPU runtime reported an error: " + why;
  return {};
}

std::string left_running(const gpu_context& ctx) {
  if (auto now = thread_count();
      ctx.allowed_threads > 0 && now > ctx.allowed_threads)
    return "hidden threads: " + std::to_string(now - ctx.allowed_threads)
           + " extra thread(s) still running after the call";
  if (has_child_processes())
    return child_processes_text;
  return {};
}

std::string started_within_round(int64_t before) {
  if (before < 0)
    return {};
  auto now = last_pid_given();
  if (now == before)
    return {};
  // Not readable once kernel code ran (it used up the descriptors): the
  // check cannot be left to such a kernel to switch off.
  if (now < 0)
    return "hidden threads: after a timed round the PIDs the runner's "
           "namespace gave could no longer be read";
  // Ids wrap around at pid_max; a count across the wrap is not known.
  auto count
    = now > before ? std::to_string(now - before) + " " : std::string{"some "};
  return "hidden threads: " + count
         + "thread(s) or process(es) started and ended within a timed round";
}

gpu_runner_reply run_gpu_request(gpu_api& api, gpu_runner_request req,
  const before_loading_fn& before_loading) {
  gpu_runner_reply reply;
  reply.nonce = req.nonce;
  auto fail = [&](eval_status status, std::string detail) {
    reply.status = status;
    reply.detail = std::move(detail);
    return std::move(reply);
  };
  task_spec task;
  task.name = "requested";
  task.backend = req.backend;
  task.kind = req.kind;
  task.dtype = req.dtype;
  set_tolerance(task, request_tolerance(req));
  task.workloads = req.workloads;
  if (auto why = check_gpu_task(task); !why.empty())
    return fail(eval_status::rejected, std::move(why));
  gpu_context ctx;
  unlock_when_done unlock{ctx.reference_code};
  ctx.k = find_kind(req.kind);
  ctx.gk = find_gpu_kind(req.kind);
  if (auto ready = prepare_context(ctx, api, req, reply, before_loading);
      ready.status != eval_status::passed)
    return fail(ready.status, std::move(ready.detail));
  reply.gpu_notes = "before timing: " + api.clock_snapshot();
  reply.status = eval_status::passed;
  for (size_t i = 0; i < req.workloads.size(); ++i) {
    reply.workloads.push_back(
      run_workload_safely(ctx, req.workloads[i], derive_seed(req.seed, i)));
    if (reply.workloads.back().status != eval_status::passed) {
      auto& last = reply.workloads.back();
      return fail(last.status, last.detail);
    }
  }
  reply.gpu_notes += "; after timing: " + api.clock_snapshot();
  return reply;
}

} // namespace eat::devices
