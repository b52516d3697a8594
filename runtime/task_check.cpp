#include "runtime/task_check.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <set>

#include "actors/agent/constraints.hpp"
#include "actors/agent/render.hpp"
#include "actors/protocol/error.hpp"
#include "devices/compiler.hpp"
#include "devices/gpu_resources.hpp"
#include "devices/kind.hpp"
#include "runtime/task_file.hpp"

namespace eat {

namespace {

/// What a template prints to reject a combination of its parameters.
constexpr std::string_view rejection_marker = "invalid combination:";

/// The first line of `log` holding `needle`, trimmed; or "".
std::string line_with(const std::string& log, std::string_view needle) {
  auto at = log.find(needle);
  if (at == std::string::npos)
    return {};
  auto begin = log.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  auto end = log.find('\n', at);
  auto line = log.substr(begin, end == std::string::npos ? end : end - begin);
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

/// `detail` with the compiler's first error line from `log`, unless it
/// holds that line already (a device's compile failure names it).
std::string with_first_error(std::string detail, const std::string& log) {
  auto line = devices::first_error_line(log);
  if (line.empty())
    line = log.substr(0, 300);
  if (!line.empty() && detail.find(line) == std::string::npos)
    detail += " (" + line + ")";
  return detail;
}

/// "; <kernel>: 40 registers, ..." for each kernel whose resources the GPU
/// compiler reported in `log` (devices/gpu_resources.hpp); "" otherwise.
std::string resources_note(const std::string& log) {
  std::string note;
  for (const auto& line : devices::kernel_resources(log))
    note += "; " + line;
  return note;
}

candidate make_candidate(
  const task_spec& task, std::string id, std::string family, std::string src) {
  candidate c;
  c.id = std::move(id);
  c.task = task.name;
  c.family = std::move(family);
  c.source = std::move(src);
  return c;
}

/// "passed; <workload> <median> us, ..." with the candidate's medians.
std::string timing_note(const eval_result& r) {
  std::string note = "passed on " + std::to_string(r.workloads.size())
                     + " workload(s); medians:";
  for (const auto& w : r.workloads) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), " %s %.1f us", w.workload.c_str(),
      w.candidate_median_ns / 1e3);
    note += buf;
  }
  return note;
}

/// Evaluates one of the task's own sources as a candidate: it must pass.
task_check_line check_source(const task_spec& task, devices::device& dev,
  const std::string& what, const std::string& source, uint64_t seed) {
  auto r = dev.evaluate(task, make_candidate(task, what, what, source), seed);
  if (r.status == eval_status::passed)
    return {task.name, what, true, timing_note(r)};
  auto detail = std::string{to_string(r.status)} + ": " + r.detail;
  if (r.status == eval_status::compile_error)
    detail = with_first_error(std::move(detail), r.build_log);
  return {task.name, what, false, detail};
}

/// The compile stage of a device (or of a GPU toolchain without a device).
using prepare_fn
  = std::function<devices::prepared(const task_spec&, const candidate&)>;

/// Compiles one of the task's own sources with a GPU compiler: it must.
task_check_line compile_source(const task_spec& task, const prepare_fn& prepare,
  const std::string& what, const std::string& source,
  const std::string& compiler) {
  auto prep = prepare(task, make_candidate(task, what, what, source));
  if (prep.status == eval_status::passed)
    return {task.name, what, true,
      "compiles with " + compiler + "; not run: no " + task.backend
        + " device here" + resources_note(prep.build_log)};
  auto detail = std::string{to_string(prep.status)} + ": " + prep.detail;
  if (!prep.build_log.empty())
    detail = with_first_error(std::move(detail), prep.build_log);
  return {task.name, what, false, detail};
}

/// Compiles one template instance; the source and the declared constraints
/// must agree on whether it is valid.
task_check_line check_instance(const task_spec& task, const prepare_fn& prepare,
  const template_family& family, const param_map& params, bool is_default,
  const target_facts& target) {
  task_check_line line{
    task.name, "template " + instance_name(family, params), false, {}};
  auto declared = evaluate_constraints(family, params, target);
  auto source = render_template(family, params);
  if (!source) {
    line.detail = "cannot render: " + render(source.error());
    return line;
  }
  auto c = make_candidate(task, family.name, family.name, std::move(*source));
  c.params = params;
  auto prep = prepare(task, c);
  if (prep.status == eval_status::passed) {
    line.ok = declared.verdict != constraint_verdict::fails;
    line.detail = !line.ok ? "compiles, but the declared constraint '"
                               + declared.violated + "' excludes it"
                  : is_default ? "default instance compiles"
                               : "compiles";
    line.detail += resources_note(prep.build_log);
    return line;
  }
  auto rejection = line_with(prep.build_log, rejection_marker);
  if (prep.status == eval_status::compile_error && !rejection.empty()) {
    line.ok = !is_default && declared.verdict != constraint_verdict::holds;
    line.detail = is_default ? "the default instance is rejected: "
                  : line.ok  ? "rejected as declared: "
                             : "no declared constraint excludes it, but the "
                               "template rejects it: ";
    line.detail += rejection;
    return line;
  }
  line.detail = std::string{to_string(prep.status)} + ": " + prep.detail;
  if (prep.status == eval_status::compile_error)
    line.detail = with_first_error(std::move(line.detail), prep.build_log);
  return line;
}

} // namespace

devices::cpu_options task_check_cpu_options(
  std::string runner_path, std::string work_dir) {
  devices::cpu_options opts;
  opts.runner_path = std::move(runner_path);
  opts.work_dir = std::move(work_dir);
  opts.timing.warmup = 1;
  opts.timing.min_samples = 3;
  opts.timing.min_time_s = 0;
  opts.timing.max_time_s = 0.2;
  return opts;
}

std::string instance_name(const template_family& family, const param_map& p) {
  std::string name = family.name + "{";
  for (size_t i = 0; i < family.params.size(); ++i) {
    const auto& key = family.params[i].name;
    auto at = p.find(key);
    name += (i == 0 ? "" : ",") + key + "="
            + (at == p.end() ? std::string{"?"} : at->second);
  }
  return name + "}";
}

std::vector<param_map> sample_instances(
  const template_family& family, uint32_t sample, uint64_t seed) {
  param_map first;
  uint64_t space = 1;
  for (const auto& p : family.params) {
    first[p.name] = p.values.front();
    space *= p.values.size();
  }
  std::vector<param_map> result{first};
  std::set<param_map> seen{first};
  std::mt19937_64 gen{seed ^ std::hash<std::string>{}(family.name)};
  auto wanted = std::min<uint64_t>(uint64_t{sample} + 1, space);
  for (int attempt = 0; attempt < 10000 && result.size() < wanted; ++attempt) {
    param_map pick;
    for (const auto& p : family.params)
      pick[p.name] = p.values[std::uniform_int_distribution<size_t>{
        0, p.values.size() - 1}(gen)];
    if (seen.insert(pick).second)
      result.push_back(std::move(pick));
  }
  return result;
}

std::vector<task_check_line> check_task_spec(const task_spec& task,
  devices::device& dev, const task_check_options& opts,
  const task_check_report& report) {
  std::vector<task_check_line> lines;
  auto add = [&](task_check_line line) {
    if (report)
      report(line);
    lines.push_back(std::move(line));
  };
  auto sampled = [&](const prepare_fn& prepare, const target_facts& target) {
    for (const auto& family : task.families) {
      auto instances = sample_instances(family, opts.sample, opts.seed);
      for (size_t i = 0; i < instances.size(); ++i)
        add(
          check_instance(task, prepare, family, instances[i], i == 0, target));
    }
  };
  devices::device* runner = task.backend == "cpu" ? &dev : nullptr;
  if (task.backend != "cpu" && opts.gpu_device)
    runner = opts.gpu_device(task.backend);
  if (runner == nullptr) {
    auto gpu = opts.gpu_compilers.find(task.backend);
    if (gpu == opts.gpu_compilers.end()) {
      add({task.name, "evaluation", true,
        "skipped: backend " + task.backend + " needs a " + task.backend
          + " device and its compiler; only loading was checked"});
      return lines;
    }
    const auto& compiler = gpu->second;
    add(compile_source(task, compiler.prepare, "baseline",
      task.baseline_source, compiler.what));
    if (!task.expert_source.empty())
      add(compile_source(task, compiler.prepare, "expert",
        task.expert_source, compiler.what));
    sampled(compiler.prepare, {});
    add({task.name, "evaluation", true,
      "skipped: backend " + task.backend + " needs a " + task.backend
        + " device; the sources were compiled with " + compiler.what});
    return lines;
  }
  if (auto why = devices::check_task(task); !why.empty()) {
    add({task.name, "harness accepts the task", false, why});
    return lines;
  }
  add(check_source(
    task, *runner, "baseline", task.baseline_source, opts.seed));
  if (!task.expert_source.empty())
    add(check_source(task, *runner, "expert", task.expert_source, opts.seed));
  sampled(
    [runner](const task_spec& t, const candidate& c) {
      return runner->prepare(t, c);
    },
    runner->caps().target);
  return lines;
}

std::vector<task_check_line> check_task_file(
  const std::filesystem::path& tasks_dir, const std::string& name,
  devices::device& dev, const task_check_options& opts,
  const task_check_report& report) {
  auto task = load_task(tasks_dir, name, task_overrides{opts.workloads});
  task_check_line loaded{name, "loads", static_cast<bool>(task), {}};
  if (!task)
    loaded.detail = render(task.error());
  else
    loaded.detail = std::to_string(task->workloads.size()) + " workload(s), "
                    + std::to_string(task->families.size())
                    + " template famil"
                    + (task->families.size() == 1 ? "y" : "ies");
  if (report)
    report(loaded);
  if (!task)
    return {loaded};
  auto rest = check_task_spec(*task, dev, opts, report);
  rest.insert(rest.begin(), std::move(loaded));
  return rest;
}

} // namespace eat
