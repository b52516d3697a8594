// `eat tasks [list] | show NAME | check [NAME...] | import DEF WORKLOADS`:
// the task library.

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "devices/cpu_device.hpp"
#include "devices/gpu_device.hpp"
#include "devices/gpu_toolchain.hpp"
#include "devices/kinds/tolerance.hpp"
#include "devices/scratch_dir.hpp"
#include "runtime/cli.hpp"
#include "runtime/flashinfer_import.hpp"
#include "runtime/paths.hpp"
#include "runtime/report.hpp"
#include "runtime/task_check.hpp"
#include "runtime/task_file.hpp"

namespace eat {

namespace {

constexpr const char* tasks_help = R"(usage: eat tasks [list] [--tasks-dir DIR]
       eat tasks show NAME [--tasks-dir DIR] [--workloads FILE]
       eat tasks check [NAME...] [--tasks-dir DIR] [--sample N]
                       [--work-dir DIR] [--cuda-arch SM] [--hip-arch GFX]
                       [--workloads FILE] [--eval-timeout S]
       eat tasks import DEFINITION.json WORKLOADS.jsonl [--tasks-dir DIR]

Lists the tasks (folders holding a task.toml, format: docs/tasks.md), or
shows one: kind, dtype, tolerances, workloads and template parameters.
DIR defaults to ./kernels, else the kernels folder of the source tree eat
was built from.

check: for each named task (default: all), on a CPU device: the file
loads, the naive and the expert baseline pass against the reference on
every workload, and each template family's default instance plus N more
(--sample, default 2, drawn deterministically) compile; an instance the
template rejects ("invalid combination: ...") is a clear rejection, not a
failure, if its declared constraints exclude it too (where the template
and its constraints disagree, the check fails). GPU tasks (backend cuda
or hip) get the same checks on the first GPU of their backend. Where
there is none, where nvcc or hipcc runs, their reference, baselines and
the same template instances are compiled (for --cuda-arch, default sm_90;
--hip-arch, default gfx90a) and their evaluation is reported as skipped;
without the compiler only loading is checked. Prints one line per check
and a summary; exits 1 naming the failures. --work-dir keeps the compile cache (default: a
temporary directory, removed afterwards).

--workloads FILE: show or check a definition task with the workloads of
FILE (JSONL) instead of its own, e.g. --workloads
kernels/mla_paged_decode_h16_ckv512_kpe64_ps1/workloads_flashinfer.jsonl
for all of FlashInfer-Bench's workloads where a decode task runs a subset.
An evaluation (every workload of one baseline or instance) is killed after
--eval-timeout seconds, default 300; the full sets need more on a small
machine.

import: creates DIR/<definition name>/ from a FlashInfer-Bench definition
and its workloads (JSONL; only the lines of that definition are kept), with
a task.toml skeleton, then lists what is still to write (reference.cpp,
baseline.cpp, the flops and bytes formulas, generators for integer
inputs). Never overwrites an existing task folder.
)";

std::filesystem::path default_tasks_dir() {
  std::error_code ec;
  if (std::filesystem::is_directory("kernels", ec))
    return "kernels";
  return std::filesystem::path{EAT_SOURCE_DIR} / "kernels";
}

/// "name dtype[3][8] (indptr)" for one tensor of a definition workload.
std::string tensor_text(const tensor_arg& a, bool output) {
  auto text = a.name + " " + a.dtype;
  for (auto d : a.shape)
    text += "[" + std::to_string(d) + "]";
  char buf[96];
  if (a.scalar) {
    std::snprintf(buf, sizeof(buf), " = %.9g", a.value);
    text += buf;
  } else if (!output && a.generator != "random") {
    text += " (" + a.generator + ")";
  }
  if (output) {
    std::snprintf(buf, sizeof(buf), " (atol %g, rtol %g", a.atol, a.rtol);
    text += buf + devices::ratio_text(devices::tolerance_of(a)) + ")";
  }
  return text;
}

void show_tensors(std::ostream& out, const workload& w) {
  if (w.outputs.empty())
    return;
  for (const auto& a : w.inputs)
    out << "    in  " << tensor_text(a, false) << "\n";
  for (const auto& a : w.outputs)
    out << "    out " << tensor_text(a, true) << "\n";
}

void show(std::ostream& out, const task_spec& t) {
  out << t.name << ": kind " << t.kind << ", dtype " << t.dtype << ", atol "
      << t.atol << ", rtol " << t.rtol << devices::task_tolerance_text(t)
      << "\n";
  if (!t.flops.empty())
    out << "flops per call: " << t.flops << "; bytes per call: " << t.bytes
        << "\n";
  out << "workloads (" << t.workloads.size() << "):\n";
  for (const auto& w : t.workloads) {
    out << "  " << w.name << ":";
    for (const auto& [axis, v] : w.axes)
      out << " " << axis << "=" << v;
    out << "\n";
    show_tensors(out, w);
  }
  for (const auto& f : t.families) {
    uint64_t size = 1;
    for (const auto& p : f.params)
      size *= p.values.size();
    out << "template " << f.name << " (" << size << " configurations):\n";
    for (const auto& p : f.params) {
      out << "  " << p.name << ":";
      for (const auto& v : p.values)
        out << " " << v;
      out << "\n";
    }
    for (const auto& c : f.constraints)
      out << "  constraint: " << c << "\n";
  }
}

/// The --workloads option as an absolute path, empty when absent.
std::filesystem::path workloads_option(const parsed_args& a) {
  auto i = a.options.find("workloads");
  if (i == a.options.end() || i->second.empty())
    return {};
  std::error_code ec;
  auto path = std::filesystem::absolute(i->second, ec);
  return ec ? std::filesystem::path{i->second} : path;
}

/// A device on the first GPU of `backend` ("cuda", "hip") for checking,
/// with few timed samples; fails where there is none (no GPU, driver or
/// runner, or eat built without the backend).
caf::expected<std::unique_ptr<devices::device>> check_gpu_device(
  const std::string& backend, const std::string& work_dir, double timeout_s) {
  devices::gpu_options opts;
  opts.runner_path = (executable_dir() / ("eat-" + backend + "-runner")).string();
  opts.work_dir = work_dir + "/" + backend + "-device";
  opts.eval_timeout_s = timeout_s;
  opts.timing.warmup = 1;
  opts.timing.min_samples = 3;
  opts.timing.min_time_s = 0;
  opts.timing.max_time_s = 0.2;
  std::error_code ec;
  std::filesystem::create_directories(opts.work_dir, ec);
  return backend == "cuda" ? devices::make_cuda_device("check-cuda", 0, opts)
                           : devices::make_hip_device("check-hip", 0, opts);
}

/// Prints one check line: "[ok] task: what (detail)" or "[FAIL] ...".
void print_line(std::ostream& out, size_t index, const task_check_line& l) {
  out << "[" << index << "] " << (l.ok ? "ok   " : "FAIL ") << l.task << ": "
      << l.what;
  if (!l.detail.empty())
    out << " (" << l.detail << ")";
  out << std::endl;
}

exit_code check_tasks(const parsed_args& a, const std::filesystem::path& dir,
  std::ostream& out) {
  auto sample = positive_option(a, "sample", 2);
  if (!sample)
    return report(out, sample.error());
  std::vector<std::string> names{a.positional.begin() + 1, a.positional.end()};
  if (names.empty()) {
    auto all = list_tasks(dir);
    if (!all)
      return report(out, all.error());
    names = std::move(*all);
  }
  std::optional<devices::scratch_dir> temp;
  std::string work_dir;
  if (a.options.count("work-dir") > 0) {
    work_dir = a.options.at("work-dir");
  } else {
    auto made = devices::scratch_dir::make(
      std::filesystem::temp_directory_path(), "eat-tasks-check.");
    if (!made)
      return report(out, made.error());
    temp.emplace(std::move(*made));
    work_dir = temp->path().string();
  }
  auto timeout = positive_option(a, "eval-timeout", 300);
  if (!timeout)
    return report(out, timeout.error());
  auto cpu = task_check_cpu_options(
    (executable_dir() / "eat-runner").string(), work_dir);
  cpu.eval_timeout_s = static_cast<double>(*timeout);
  auto dev = devices::make_cpu_device("check", cpu);
  if (!dev)
    return report(out, dev.error());
  task_check_options opts;
  opts.sample = static_cast<uint32_t>(*sample);
  opts.workloads = workloads_option(a);
  std::string gpu_note;
  for (const auto& [backend, program, option, arch] :
    {std::tuple{"cuda", "nvcc", "cuda-arch", "sm_90"},
      std::tuple{"hip", "hipcc", "hip-arch", "gfx90a"}}) {
    auto chosen = a.options.count(option) > 0 ? a.options.at(option)
                                              : std::string{arch};
    auto tools = devices::gpu_toolchain::make(backend, program, "g++",
      {"-O3"}, work_dir + "/" + backend, 600);
    if (!tools)
      continue; // the backend's tasks are only loaded
    auto shared
      = std::make_shared<devices::gpu_toolchain>(std::move(*tools));
    auto what = std::string{program} + " for " + chosen;
    opts.gpu_compilers[backend] = {what,
      [shared, chosen](const task_spec& t, const candidate& c) {
        return shared->prepare(t, c, chosen);
      }};
    gpu_note += "; " + std::string{backend} + " tasks compiled with " + what
                + " where no " + backend + " device runs them";
  }
  // A GPU of a task's backend, when one can be made here, runs its checks.
  std::map<std::string, std::unique_ptr<devices::device>> gpus;
  opts.gpu_device = [&](const std::string& backend) -> devices::device* {
    if (auto at = gpus.find(backend); at != gpus.end())
      return at->second.get();
    auto& made = gpus[backend];
    auto gpu = check_gpu_device(backend, work_dir, cpu.eval_timeout_s);
    if (gpu) {
      made = std::move(*gpu);
      out << backend << " tasks run on " << made->description() << std::endl;
    } else {
      out << "no " << backend << " device (" << render(gpu.error())
          << "): " << backend << " tasks are compiled only" << std::endl;
    }
    return made.get();
  };
  out << "checking " << names.size() << " task(s) on "
      << (*dev)->description() << gpu_note << std::endl;
  size_t index = 0;
  std::vector<std::string> failures;
  for (const auto& name : names)
    for (const auto& line : check_task_file(dir, name, **dev, opts,
           [&](const task_check_line& l) { print_line(out, ++index, l); }))
      if (!line.ok)
        failures.push_back(line.task + ": " + line.what);
  out << index << " check(s), " << failures.size() << " failed\n";
  for (const auto& f : failures)
    out << "  failed: " << f << "\n";
  return failures.empty() ? exit_code::ok : exit_code::failed;
}

exit_code import_task(const parsed_args& a, const std::filesystem::path& dir,
  std::ostream& out) {
  const auto& pos = a.positional;
  if (pos.size() != 3)
    return usage_error(
      out, "import needs DEFINITION.json and WORKLOADS.jsonl", "tasks");
  auto result = import_definition(pos[1], pos[2], dir);
  if (!result)
    return report(out, result.error());
  out << "created task " << result->task << " in " << result->folder.string()
      << " (" << result->workloads << " workload(s))\n"
      << "still needed before `eat tasks check " << result->task
      << "` passes:\n";
  for (const auto& item : result->todo)
    out << "  - " << item << "\n";
  return exit_code::ok;
}

} // namespace

exit_code cmd_tasks(const std::vector<std::string>& args, std::ostream& out) {
  auto parsed = parse_command(args,
    {"tasks", tasks_help,
      {"tasks-dir", "sample", "work-dir", "cuda-arch", "hip-arch", "workloads",
        "eval-timeout"},
      {}, 0, 256,
      "'list', 'show NAME', 'check [NAME...]' or "
      "'import DEFINITION WORKLOADS'"},
    out);
  if (auto* code = std::get_if<exit_code>(&parsed))
    return *code;
  auto& a = std::get<parsed_args>(parsed);
  auto dir = a.options.count("tasks-dir") > 0
               ? std::filesystem::path{a.options["tasks-dir"]}
               : default_tasks_dir();
  const auto& pos = a.positional;
  auto fail = [&](const caf::error& err) { return report(out, err); };
  if (pos.empty() || (pos[0] == "list" && pos.size() == 1)) {
    auto names = list_tasks(dir);
    if (!names)
      return fail(names.error());
    for (const auto& n : *names)
      out << n << "\n";
    return exit_code::ok;
  }
  if (pos[0] == "show" && pos.size() == 2) {
    auto task = load_task(dir, pos[1], task_overrides{workloads_option(a)});
    if (!task)
      return fail(task.error());
    show(out, *task);
    return exit_code::ok;
  }
  if (pos[0] == "check")
    return check_tasks(a, dir, out);
  if (pos[0] == "import") // into the directory `check` then reads
    return import_task(a, dir, out);
  if (pos[0] == "show")
    return usage_error(out,
      "eat tasks show takes exactly one NAME (eat tasks list names them)",
      "tasks");
  if (pos[0] == "list")
    return usage_error(out, "eat tasks list takes no arguments", "tasks");
  return usage_error(out,
    "unknown tasks subcommand '" + pos[0]
      + "' (list, show NAME, check [NAME...], import DEFINITION WORKLOADS)",
    "tasks");
}

} // namespace eat
