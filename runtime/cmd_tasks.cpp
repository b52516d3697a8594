// `eat tasks [list] | eat tasks show NAME`: the task library.

#include "runtime/cli.hpp"
#include "runtime/paths.hpp"
#include "runtime/report.hpp"
#include "runtime/task_file.hpp"

namespace eat {

namespace {

constexpr const char* help = R"(usage: eat tasks [list] [--tasks-dir DIR]
       eat tasks show NAME [--tasks-dir DIR]

Lists the tasks (folders holding a task.toml, format: docs/tasks.md), or
shows one: kind, dtype, tolerances, workloads and template parameters.
DIR defaults to ./kernels, else the kernels folder of the source tree eat
was built from.
)";

std::filesystem::path default_tasks_dir() {
  std::error_code ec;
  if (std::filesystem::is_directory("kernels", ec))
    return "kernels";
  return std::filesystem::path{EAT_SOURCE_DIR} / "kernels";
}

void show(std::ostream& out, const task_spec& t) {
  out << t.name << ": kind " << t.kind << ", dtype " << t.dtype << ", atol "
      << t.atol << ", rtol " << t.rtol << "\n"
      << "workloads (" << t.workloads.size() << "):\n";
  for (const auto& w : t.workloads) {
    out << "  " << w.name << ":";
    for (const auto& [axis, v] : w.axes)
      out << " " << axis << "=" << v;
    out << "\n";
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
  }
}

} // namespace

exit_code cmd_tasks(const std::vector<std::string>& args, std::ostream& out) {
  auto parsed = parse_command(args,
                              {"tasks", help, {"tasks-dir"}, {}, 0, 2,
                               "'list' or 'show NAME'"},
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
    auto task = load_task(dir, pos[1]);
    if (!task)
      return fail(task.error());
    show(out, *task);
    return exit_code::ok;
  }
  return usage_error(out, "unknown tasks subcommand", "tasks");
}

} // namespace eat
