// `eat status RUN_DIR`: shows a run's state from its materialised views
// (persistence/views.hpp), without replaying the log. Safe while the run is
// going on (it only reads).

#include <map>

#include "actors/protocol/wire.hpp"
#include "persistence/file_tree.hpp"
#include "persistence/views.hpp"
#include "runtime/cli.hpp"
#include "runtime/report.hpp"
#include "runtime/run_loader.hpp"

namespace eat {

namespace {

constexpr const char* status_help = R"(usage: eat status RUN_DIR

Shows the state of the run in RUN_DIR from its materialised views (kept in
step with the log, so no replay is needed): whether it is finished,
evaluations done with the count per status, teams, lessons, and the best
candidate with its report. Works while the run goes on.
)";

/// The decoded views of a run.
struct views {
  run_view run;
  std::vector<team_view> teams;
  std::vector<candidate_view> candidates;
};

template <class T>
caf::expected<T> decode_view(const std::string& key, const std::string& v) {
  auto x = wire::decode<T>(v);
  if (!x)
    return make_error(error::store_failure,
                      "view '" + key + "': " + render(x.error()));
  return x;
}

caf::expected<views> load_views(const persistence::store& s) {
  auto records = persistence::read_views(s);
  if (!records)
    return records.error();
  views out;
  for (const auto& [key, value] : *records) {
    caf::error err;
    if (key == "run") {
      auto x = decode_view<run_view>(key, value);
      x ? void(out.run = *x) : void(err = x.error());
    } else if (key.rfind("team/", 0) == 0) {
      auto x = decode_view<team_view>(key, value);
      x ? out.teams.push_back(*x) : void(err = x.error());
    } else if (key.rfind("candidate/", 0) == 0) {
      auto x = decode_view<candidate_view>(key, value);
      x ? out.candidates.push_back(*x) : void(err = x.error());
    }
    if (err)
      return err;
  }
  return out;
}

void print_status(std::ostream& out, const std::string& dir, const views& v,
                  persistence::store& s) {
  const auto& r = v.run;
  std::map<std::string, uint64_t> by_status;
  for (const auto& c : v.candidates)
    by_status[to_string(c.status)] += 1;
  out << "run " << r.run_id << " (task " << r.task << ", seed " << r.seed
      << ")\nstate: "
      << (r.finished ? "stopped: " + r.stop_reason : "not finished")
      << "\nevaluations: " << r.evaluations << " of " << r.max_evaluations;
  for (const auto& [status, n] : by_status)
    if (status != "pending")
      out << ", " << n << " " << status;
  out << "\nsubmitted but not evaluated: " << by_status["pending"]
      << "\nteams: " << r.teams << " (" << r.active_teams
      << " active), lessons: " << r.learnings << ", resumes: " << r.resumes
      << ", events: " << r.last_seq << ", tokens: " << r.tokens << "\n";
  for (const auto& t : v.teams)
    out << "  " << t.team << " (" << t.strategy << (t.active ? "" : ", ended")
        << "): " << t.evaluated << " evaluated, " << t.passed
        << " passed, best " << fixed(t.best_speedup) << "x"
        << (t.best_candidate.empty() ? "" : " (" + t.best_candidate + ")")
        << (t.agent_evaluations == 0
               ? ""
               : ", " + std::to_string(t.agent_evaluations)
                   + " tried with ./eval")
        << "\n";
  if (r.best_candidate.empty()) {
    out << "best: none passed yet\n";
    return;
  }
  std::string team;
  for (const auto& c : v.candidates)
    if (c.id == r.best_candidate)
      team = c.team;
  auto report = "/teams/" + team + "/candidates/" + r.best_candidate
                + "/result.md";
  out << "best speedup: " << fixed(r.best_speedup) << "x, candidate "
      << r.best_candidate << " of team " << team << "\nbest kernel: "
      << "eat fs cat " << dir << " /teams/" << team << "/best_kernel.cpp\n";
  if (auto text = persistence::file_tree{s}.get(report))
    out << "\n" << *text;
}

} // namespace

exit_code cmd_status(const std::vector<std::string>& args, std::ostream& out) {
  auto parsed = parse_command(
    args, {"status", status_help, {}, {}, 1, 1, "exactly one RUN_DIR"}, out);
  if (auto* code = std::get_if<exit_code>(&parsed))
    return *code;
  auto& a = std::get<parsed_args>(parsed);
  auto fail = [&](const caf::error& err) { return report(out, err); };
  const auto& dir = a.positional[0];
  auto store = open_run_store_dir(dir);
  if (!store)
    return fail(store.error());
  auto v = load_views(**store);
  if (!v)
    return fail(v.error());
  if (v->run.run_id.empty())
    return fail(make_error(error::invalid_run_dir,
                           "run directory '" + dir + "' has an empty log"));
  print_status(out, dir, *v, **store);
  return exit_code::ok;
}

} // namespace eat
