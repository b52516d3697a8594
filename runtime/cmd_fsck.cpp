// `eat fsck RUN_DIR`: checks a run's store (persistence/fsck.hpp).

#include "persistence/fsck.hpp"
#include "runtime/cli.hpp"
#include "runtime/run_dir.hpp"
#include "runtime/run_loader.hpp"

namespace eat {

namespace {

constexpr const char* help = R"(usage: eat fsck RUN_DIR

Checks the run's store: the event log has no gaps and every record decodes
and fits the history; every file version's blob exists and matches its
SHA-256; the materialised views equal a rebuild from the log. Prints each
problem precisely and exits 5 when there is one. It takes the run
directory's lock, so it refuses a run that a process is working on.
)";

} // namespace

exit_code cmd_fsck(const std::vector<std::string>& args, std::ostream& out) {
  auto parsed = parse_args(args, {});
  if (!parsed)
    return usage_error(out, render(parsed.error()), "fsck");
  if (parsed->help) {
    out << help;
    return exit_code::ok;
  }
  if (parsed->positional.size() != 1)
    return usage_error(out, "fsck takes exactly one RUN_DIR", "fsck");
  auto fail = [&](const caf::error& err) {
    out << "eat: " << render(err) << "\n";
    return exit_code_for(err);
  };
  auto dir = run_dir::open(parsed->positional[0]);
  if (!dir)
    return fail(dir.error());
  auto store = open_run_store(dir->store_dir(), 0, true);
  if (!store)
    return fail(store.error());
  auto report = persistence::fsck(**store);
  if (!report)
    return fail(report.error());
  out << "fsck " << dir->path().string() << ": " << report->events
      << " events, " << report->files << " files, " << report->views
      << " view records\n";
  for (const auto& p : report->problems)
    out << "  problem: " << p << "\n";
  if (report->problems.empty()) {
    out << "consistent\n";
    return exit_code::ok;
  }
  out << report->problems.size() << " problem(s)\n";
  return exit_code::inconsistent;
}

} // namespace eat
