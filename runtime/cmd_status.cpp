// `eat status RUN_DIR`: shows a run's state, read from its log. Safe while the
// run is going on (it only reads).

#include <map>

#include "runtime/cli.hpp"
#include "runtime/report.hpp"
#include "runtime/run_dir.hpp"
#include "runtime/run_loader.hpp"

namespace eat {

namespace {

constexpr const char* help = R"(usage: eat status RUN_DIR

Shows the state of the run in RUN_DIR, rebuilt from its event log: whether
it is finished, evaluations done, candidates per status, teams, the best
candidate with its per-workload speedups. Works while the run goes on.
)";

void print_status(
  std::ostream& out, const std::string& dir, const run_history& h) {
  std::map<std::string, uint64_t> by_status;
  for (const auto& [id, r] : h.results)
    by_status[to_string(r.status)] += 1;
  uint64_t unfinished = 0;
  for (const auto& [id, t] : h.teams)
    unfinished += t.unfinished.size();
  out << "run " << h.start.run_id << " (task " << h.start.task << ", seed "
      << h.start.seed << ")\n"
      << "state: "
      << (h.finished ? "stopped: " + h.last_summary.reason : "not finished")
      << "\n"
      << "evaluations: " << h.evaluations << " of " << h.start.max_evaluations;
  for (const auto& [status, n] : by_status)
    out << ", " << n << " " << status;
  out << "\nsubmitted but not evaluated: " << unfinished << "\n"
      << "teams: " << h.teams.size() << ", resumes: " << h.resumes
      << ", events: " << h.last_seq << "\n";
  for (const auto& [id, t] : h.teams)
    out << "  " << id << " (" << t.spawned.strategy << "): " << t.scored.size()
        << " evaluated\n";
  auto s = summarize(h, "");
  if (s.best_candidate.empty()) {
    out << "best: none passed yet\n";
    return;
  }
  auto report = final_report(s, dir + "/best_kernel.cpp (and /teams/" + s.best_team
                                 + "/best_kernel.cpp in 'eat fs')");
  out << report.substr(report.find("best speedup"));
}

} // namespace

exit_code cmd_status(const std::vector<std::string>& args, std::ostream& out) {
  auto parsed = parse_args(args, {});
  if (!parsed)
    return usage_error(out, render(parsed.error()), "status");
  if (parsed->help) {
    out << help;
    return exit_code::ok;
  }
  if (parsed->positional.size() != 1)
    return usage_error(out, "status takes exactly one RUN_DIR", "status");
  const auto& dir = parsed->positional[0];
  auto fail = [&](const caf::error& err) {
    out << "eat: " << render(err) << "\n";
    return exit_code_for(err);
  };
  auto store = open_run_store_dir(dir);
  if (!store)
    return fail(store.error());
  auto h = read_history(**store);
  if (!h)
    return fail(h.error());
  if (!h->started)
    return fail(make_error(
      error::invalid_run_dir, "run directory '" + dir + "' has an empty log"));
  print_status(out, dir, *h);
  return exit_code::ok;
}

} // namespace eat
