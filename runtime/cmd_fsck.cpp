// `eat fsck RUN_DIR`: checks a run's store (persistence/fsck.hpp).

#include "persistence/fsck.hpp"
#include "runtime/cli.hpp"
#include "runtime/run_dir.hpp"
#include "runtime/run_loader.hpp"

namespace eat {

namespace {

constexpr const char* fsck_help = R"(usage: eat fsck RUN_DIR

Checks the run's store: the event log has no gaps and every record decodes
and fits the history; every file version's blob exists and matches its
SHA-256; the materialised views equal a rebuild from the log. Prints each
problem precisely and exits 5 when there is one. It takes the run
directory's lock, so it refuses a run that a process is working on.
)";

} // namespace

exit_code cmd_fsck(const std::vector<std::string>& args, std::ostream& out) {
  auto parsed = parse_command(
    args, {"fsck", fsck_help, {}, {}, 1, 1, "exactly one RUN_DIR"}, out);
  if (auto* code = std::get_if<exit_code>(&parsed))
    return *code;
  auto& a = std::get<parsed_args>(parsed);
  auto fail = [&](const caf::error& err) { return report(out, err); };
  auto dir = run_dir::open(a.positional[0]);
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
