// `eat resume RUN_DIR`: continues a run from its log.

#include "actors/protocol/wire.hpp"
#include "runtime/cli.hpp"
#include "runtime/printable.hpp"
#include "runtime/report.hpp"
#include "runtime/run_loader.hpp"
#include "runtime/session.hpp"

namespace eat {

namespace {

constexpr const char* resume_help = R"(usage: eat resume RUN_DIR

Continues the run in RUN_DIR after a stop, a crash or a kill -9. The run's
state is rebuilt from its event log: every evaluation that was committed is
kept and never repeated; candidates that were submitted but not evaluated are
evaluated first. The run uses the configuration and the task it started with
(both are in its log). A run whose evaluation budget is spent just prints its
report.
)";

} // namespace

exit_code cmd_resume(
  const std::vector<std::string>& args, std::ostream& console) {
  // What agents wrote reaches the terminal only as printable text.
  printable_buffer buffer{console.rdbuf()};
  std::ostream out{&buffer};
  auto parsed = parse_command(
    args, {"resume", resume_help, {}, {}, 1, 1, "exactly one RUN_DIR"}, out);
  if (auto* code = std::get_if<exit_code>(&parsed))
    return *code;
  auto& a = std::get<parsed_args>(parsed);
  auto fail = [&](const caf::error& err) { return report(out, err); };
  auto dir = run_dir::open(a.positional[0]);
  if (!dir)
    return fail(dir.error());
  auto store = open_run_store(dir->store_dir(), 0, false);
  if (!store)
    return fail(store.error());
  auto writer = open_run_writer(**store);
  if (!writer)
    return fail(writer.error());
  const auto* history = &(*writer)->history();
  if (!history->started)
    return fail(make_error(error::invalid_run_dir,
      "run directory '" + dir->path().string()
        + "': its log is empty (the run never started)"));
  auto cfg = parse_config(history->start.config_toml,
    history->start.config_path, config_checks::text_only);
  if (!cfg)
    return fail(cfg.error());
  if (history->evaluations >= cfg->run.max_evaluations) {
    out << "run " << dir->id() << " is complete: " << history->evaluations
        << " of " << cfg->run.max_evaluations << " evaluations done\n"
        << final_report(summarize(*history, "max_evaluations reached"),
             dir->best_kernel().string());
    return exit_code::ok;
  }
  run_resumed r;
  r.last_seq = history->last_seq;
  for (const auto& [id, t] : history->teams)
    r.unfinished += t.unfinished.size();
  out << "resuming run " << dir->id() << " after event " << r.last_seq << ": "
      << history->evaluations << " evaluations kept, " << r.unfinished
      << " submitted candidate(s) to evaluate first\n";
  auto seq = commit_event(**writer, event_kind::run_resumed, wire::encode(r));
  if (!seq)
    return fail(seq.error());
  auto task = history->start.spec;
  return run_session(*dir, {*cfg, task, *store, *writer}, out);
}

} // namespace eat
