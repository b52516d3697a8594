#include "devices/cpu_device.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <sched.h>
#include <unistd.h>

#include "actors/protocol/error.hpp"
#include "devices/compiler.hpp"
#include "devices/cpu_method.hpp"
#include "devices/cpu_peak.hpp"
#include "devices/kind.hpp"
#include "devices/run_as.hpp"
#include "devices/runner_client.hpp"
#include "devices/scoring.hpp"

namespace eat::devices {

namespace fs = std::filesystem;

namespace {

/// Bytes of compiler output kept in eval_result::build_log.
constexpr size_t max_build_log = 16 * 1024;

/// The reference is compiled plainly: it must be right, not fast.
const std::vector<std::string> reference_flags{"-O2", "-std=c++17"};

std::string truncated(std::string log) {
  if (log.size() <= max_build_log)
    return log;
  auto dropped = log.size() - max_build_log;
  log.resize(max_build_log);
  log += "\n[" + std::to_string(dropped) + " more bytes truncated]\n";
  return log;
}

/// "peak ~X GFLOP/s, ~Y GB/s", the figures the speed-of-light gate uses.
std::string peak_text(const cpu_peak& peak) {
  return "peak ~" + short_number(peak.flops_per_s / 1e9) + " GFLOP/s, ~"
         + short_number(peak.bytes_per_s / 1e9) + " GB/s";
}

std::string join(const std::vector<std::string>& xs) {
  std::string result;
  for (const auto& x : xs)
    result += (result.empty() ? "" : " ") + x;
  return result;
}

/// Flags for `c`: the device's, plus "-l<lib>" for each of the task's
/// expert_libs when `c` is the task's own expert baseline (only the task's
/// expert may link a vendor library; any other candidate gets the plain
/// flags).
std::vector<std::string> candidate_flags(const std::vector<std::string>& base,
  const task_spec& task, const candidate& c) {
  auto flags = base;
  if (task.expert_source.empty() || c.source != task.expert_source
      || task.expert_libs.empty())
    return flags;
  // The compiler puts flags before the source file, and Debian's linker
  // drops a library named before any object that needs it unless told not
  // to (--as-needed is the default there).
  flags.emplace_back("-Wl,--no-as-needed");
  for (const auto& lib : task.expert_libs)
    flags.push_back("-l" + lib);
  return flags;
}

class cpu_device final : public device {
public:
  cpu_device(std::string id, cpu_options opts, compiler comp, int core,
    cpu_peak peak, std::map<std::string, int64_t> target)
    : id_(std::move(id)), opts_(std::move(opts)), compiler_(std::move(comp)),
      core_(core), peak_(peak) {
    description_ = id_ + ": " + cpu_model() + ", core " + std::to_string(core_)
                   + ", " + compiler_.identity()
                   + ", speed-of-light gate: " + peak_text(peak_);
    compiler_text_
      = compiler_.identity() + "; " + join(shared_object_flags(opts_.flags));
    caps_.kind = "cpu";
    caps_.model = cpu_model();
    caps_.arch = cpu_arch();
    caps_.memory_bytes = opts_.address_space_mib * 1024 * 1024;
    // The core's peaks as measured; the gate allows the factor on top.
    caps_.peak_flops = peak_.flops_per_s / cpu_peak_safety_factor;
    caps_.peak_bytes_per_s = peak_.bytes_per_s / cpu_peak_safety_factor;
    caps_.identity = "cpu:core" + std::to_string(core_) + ":" + caps_.model;
    caps_.target = std::move(target);
  }

  std::string id() const override {
    return id_;
  }

  std::string description() const override {
    return description_;
  }

  device_caps caps() const override {
    return caps_;
  }

  prepared prepare(const task_spec& task, const candidate& c) const override;

  eval_result run(const task_spec& task, const candidate& c,
                  const prepared& objects, uint64_t seed) override;

private:
  runner_request make_request(
    const task_spec& task, const prepared& so, uint64_t seed) const;

  std::string id_;
  cpu_options opts_;
  compiler compiler_;
  int core_;
  cpu_peak peak_;
  std::string description_;
  std::string compiler_text_;
  device_caps caps_;
};

prepared cpu_device::prepare(const task_spec& task, const candidate& c) const {
  prepared out;
  auto flags = candidate_flags(opts_.flags, task, c);
  struct job {
    const std::string& source;
    const std::vector<std::string>& flags;
    const char* file;
    /// Who is at fault when it does not compile.
    const char* who;
    /// Failures of the task's own sources are not the candidate's.
    eval_status failure;
    std::string& so;
  };
  job jobs[] = {
    {task.reference_source, reference_flags, "reference.cpp",
      "the task's reference", eval_status::rejected, out.reference_object},
    {task.baseline_source, opts_.flags, "baseline.cpp", "the task's baseline",
      eval_status::rejected, out.baseline_object},
    {c.source, flags, "candidate.cpp", "the candidate",
      eval_status::compile_error, out.candidate_object},
  };
  if (auto why = check_task(task); !why.empty()) {
    out.status = eval_status::rejected;
    out.detail = std::move(why);
    return out;
  }
  for (auto& j : jobs) {
    auto fail = [&](std::string detail) {
      out.status = j.failure;
      out.detail = std::move(detail);
      return std::move(out);
    };
    auto result = compiler_.compile(j.source, j.flags, j.file);
    // The machine's failure (a full disk), not the source's: rejected.
    if (!result) {
      j.failure = eval_status::rejected;
      return fail(std::string{"cannot compile "} + j.who + ": "
                  + render(result.error()) + " (the device's fault)");
    }
    out.seconds += result->seconds;
    // The log shown is the candidate's, or that of a task source that failed.
    if (j.failure == eval_status::compile_error || !result->ok)
      out.build_log = truncated(std::move(result->log));
    if (!result->ok)
      return fail(std::string{j.who} + " does not compile: " + result->failure);
    j.so = result->so_path;
  }
  return out;
}

runner_request cpu_device::make_request(
  const task_spec& task, const prepared& so, uint64_t seed) const {
  auto req = make_runner_request(
    task, so, seed, opts_.timing, core_, opts_.eval_timeout_s);
  req.limits.address_space_mib = opts_.address_space_mib;
  req.limits.run_as_uid = opts_.run_as_uid;
  req.limits.run_as_gid = opts_.run_as_gid;
  req.kernel_processes = opts_.kernel_processes;
  return req;
}

eval_result cpu_device::run(const task_spec& task, const candidate& c,
  const prepared& prepared_objects, uint64_t seed) {
  prepared again;
  const auto& objects = kept_or_again(*this, task, c, prepared_objects, again);
  auto result = begin_result(c, seed, objects, description_, compiler_text_);
  auto fail = [&](eval_status status, std::string detail) {
    result.status = status;
    result.detail = std::move(detail);
    return std::move(result);
  };
  if (objects.status != eval_status::passed)
    return fail(objects.status, objects.detail);
  runner_launch launch{opts_.runner_path,
    (fs::path{opts_.work_dir} / "scratch").string(), opts_.eval_timeout_s};
  auto run = run_runner(launch, make_request(task, objects, seed));
  if (!run)
    return fail(eval_status::runtime_error,
      "cannot run the candidate: " + render(run.error()));
  result.run_s = run->seconds;
  result.method
    = measurement_method(opts_.timing, run->reply ? &*run->reply : nullptr)
      + "; speed-of-light gate: " + peak_text(peak_);
  if (!run->reply)
    return fail(run->status, std::move(run->detail));
  auto scored = apply_speed_of_light(
    score_reply(*run->reply, task.workloads, seed), *find_kind(task.kind),
    task.workloads, peak_, cpu_peak_safety_factor);
  result.workloads = std::move(scored.workloads);
  result.geomean_speedup = scored.geomean_speedup;
  result.status = scored.status;
  result.detail = std::move(scored.detail);
  return result;
}

caf::expected<std::string> absolute_program(const std::string& program) {
  // posix_spawn changes directory before exec, so a relative path with a
  // slash must be made absolute; a bare name is looked up in PATH.
  if (program.find('/') == std::string::npos)
    return program;
  std::error_code ec;
  auto path = fs::absolute(program, ec);
  if (ec)
    return make_error(error::io_failure, "bad path " + program);
  return path.string();
}

/// The peaks of the speed-of-light gate: measured on `core` unless both are
/// overridden in the options.
caf::expected<cpu_peak> device_peak(const cpu_options& opts, int core) {
  cpu_peak result{opts.peak_flops_override, opts.peak_bw_override};
  if (result.flops_per_s > 0 && result.bytes_per_s > 0)
    return result;
  auto measured = measure_cpu_peak(core);
  if (!measured)
    return measured;
  if (result.flops_per_s <= 0)
    result.flops_per_s = measured->flops_per_s;
  if (result.bytes_per_s <= 0)
    result.bytes_per_s = measured->bytes_per_s;
  return result;
}

} // namespace

std::string cpu_arch() {
  std::ifstream in{"/proc/cpuinfo"};
  std::string line;
  std::string arch = "x86_64";
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      for (const char* f : {" avx512f", " avx2", " avx512_bf16"})
        if (line.find(std::string{f} + " ") != line.npos)
          arch += f;
      break;
    }
  return arch;
}

std::string cpu_model() {
  std::ifstream in{"/proc/cpuinfo"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0)
      if (auto colon = line.find(':'); colon != line.npos)
        return line.substr(line.find_first_not_of(" \t", colon + 1));
  return "unknown CPU";
}

caf::expected<int> resolve_core(int requested) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0)
    return make_error(error::device_unavailable, "sched_getaffinity failed");
  if (requested >= 0) {
    if (requested < CPU_SETSIZE && CPU_ISSET(requested, &set))
      return requested;
    return make_error(
      error::invalid_config, "core " + std::to_string(requested)
                               + " is not available to this process");
  }
  for (int core = CPU_SETSIZE - 1; core >= 0; --core)
    if (CPU_ISSET(core, &set))
      return core;
  return make_error(error::device_unavailable, "no core available");
}

std::vector<int> cores_besides(const std::vector<int>& taken) {
  auto all = thread_cores();
  std::vector<int> rest;
  for (auto core : all)
    if (std::find(taken.begin(), taken.end(), core) == taken.end())
      rest.push_back(core);
  return rest.empty() ? all : rest;
}

core_plan plan_cores(const std::vector<int>& timed, bool gpus) {
  core_plan plan;
  auto rest = cores_besides(timed);
  if (rest.empty())
    return plan;
  plan.gpu_host = rest.back();
  plan.compile = rest;
  if (!gpus)
    return plan;
  auto taken = timed;
  taken.push_back(plan.gpu_host);
  auto fewer = cores_besides(taken);
  bool timed_core = std::any_of(fewer.begin(), fewer.end(), [&](int core) {
    return std::find(timed.begin(), timed.end(), core) != timed.end();
  });
  if (!timed_core)
    plan.compile = std::move(fewer);
  return plan;
}

std::string pin_thread(const std::vector<int>& cores) {
  if (cores.empty())
    return {};
  cpu_set_t set;
  CPU_ZERO(&set);
  for (auto core : cores)
    if (core >= 0 && core < CPU_SETSIZE)
      CPU_SET(core, &set);
  // 0: the calling thread, not the whole process.
  if (::sched_setaffinity(0, sizeof(set), &set) != 0)
    return std::string{"sched_setaffinity: "} + std::strerror(errno);
  return {};
}

std::vector<int> thread_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0)
    return cores;
  for (int core = 0; core < CPU_SETSIZE; ++core)
    if (CPU_ISSET(core, &set))
      cores.push_back(core);
  return cores;
}

pinned_thread::pinned_thread(const std::vector<int>& cores) {
  if (cores.empty())
    return;
  auto saved = thread_cores();
  if (saved.empty()) {
    error_ = std::string{"sched_getaffinity: "} + std::strerror(errno);
    return;
  }
  error_ = pin_thread(cores);
  if (error_.empty())
    saved_ = std::move(saved);
}

pinned_thread::~pinned_thread() {
  pin_thread(saved_);
}

caf::expected<std::unique_ptr<device>> make_cpu_device(
  std::string id, cpu_options opts) {
  if (opts.runner_path.empty())
    return make_error(error::device_unavailable,
      "cpu device " + id + ": runner_path is not set");
  auto runner = absolute_program(opts.runner_path);
  if (!runner || ::access(runner->c_str(), X_OK) != 0)
    return make_error(error::device_unavailable,
      "cpu device " + id + ": no executable runner at " + opts.runner_path);
  opts.runner_path = *runner;
  if (opts.work_dir.empty())
    return make_error(
      error::invalid_config, "cpu device " + id + ": work_dir is not set");
  std::error_code ec;
  auto work_dir = fs::absolute(opts.work_dir, ec);
  if (!ec)
    fs::create_directories(work_dir / "scratch", ec);
  if (ec)
    return make_error(error::io_failure, "cpu device " + id + ": cannot create "
                                           + opts.work_dir
                                           + "/scratch: " + ec.message());
  opts.work_dir = work_dir.string();
  auto program = absolute_program(opts.compiler);
  if (!program)
    return std::move(program.error());
  auto comp = compiler::make(
    *program, (work_dir / "cache").string(), opts.compile_timeout_s);
  if (!comp)
    return std::move(comp.error());
  run_as_ids ids;
  if (auto err = resolve_run_as("cpu device " + id, opts.run_as, ids))
    return err;
  opts.run_as_uid = ids.uid;
  opts.run_as_gid = ids.gid;
  auto core = resolve_core(opts.core);
  if (!core)
    return std::move(core.error());
  auto peak = device_peak(opts, *core);
  if (!peak)
    return std::move(peak.error());
  auto target = comp->target_facts(opts.flags);
  return std::unique_ptr<device>{std::make_unique<cpu_device>(std::move(id),
    std::move(opts), std::move(*comp), *core, *peak, std::move(target))};
}

} // namespace eat::devices
