#include "actors/artifacts.hpp"

#include <cstdio>

namespace eat {

namespace {

std::string number(double x, const char* format = "%.3g") {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, x);
  return buf;
}

std::string workload_table(const eval_result& r) {
  std::string out = "| workload | status | baseline median ns | candidate "
                    "median ns | speedup | 95% CI | samples | CV | max error "
                    "| speed of light |\n|---|---|---|---|---|---|---|---|---|"
                    "---|\n";
  for (const auto& w : r.workloads)
    out += "| " + w.workload + " | " + to_string(w.status) + " | "
           + number(w.baseline_median_ns, "%.0f") + " | "
           + number(w.candidate_median_ns, "%.0f") + " | "
           + number(w.speedup) + " | [" + number(w.speedup_low) + ", "
           + number(w.speedup_high) + "] | " + std::to_string(w.samples)
           + " | " + number(w.candidate_cv) + " | "
           + number(w.max_abs_error) + " | "
           + number(100 * w.sol_fraction, "%.2g") + " % |\n";
  return out;
}

/// kernel.cpp, result.md and (when the compiler said anything) build.log
/// of one evaluation, in `dir`.
std::vector<file_write> files_in(
  const std::string& dir, const candidate& c, const eval_result& r) {
  std::vector<file_write> out{{dir + "kernel.cpp", c.source, c.agent},
    {dir + "result.md", result_markdown(c, r), c.team}};
  if (!r.build_log.empty())
    out.push_back({dir + "build.log", r.build_log, c.team});
  return out;
}

} // namespace

std::vector<file_write> agent_eval_files(
  const candidate& c, const eval_result& r) {
  return files_in(agent_eval_dir(c), c, r);
}

std::string candidate_dir(const candidate& c) {
  return "/teams/" + c.team + "/candidates/" + c.id + "/";
}

std::string result_markdown(const candidate& c, const eval_result& r) {
  std::string out = "# " + c.id + ": " + to_string(r.status) + "\n\n";
  if (r.status == eval_status::passed)
    out += "Geometric-mean speedup over the baseline: "
           + number(r.geomean_speedup) + "x\n\n";
  if (!r.detail.empty())
    out += "Reason: " + r.detail + "\n\n";
  out += "- team " + c.team + ", agent " + c.agent + ", parent "
         + (c.parent.empty() ? "none" : c.parent) + "\n- template "
         + c.family;
  for (const auto& [k, v] : c.params)
    out += " " + k + "=" + v;
  out += "\n- source sha256 " + r.source_hash + "\n- device " + r.device
         + "\n- compiler " + r.compiler + "\n- method " + r.method
         + "\n- compile " + number(r.compile_s) + " s, run "
         + number(r.run_s) + " s\n\n";
  if (!r.workloads.empty())
    out += workload_table(r);
  return out;
}

std::string agent_eval_dir(const candidate& c) {
  return "/teams/" + c.team + "/evals/" + c.id + "/";
}

std::vector<file_write> evaluation_files(const candidate& c,
                                         const eval_result& r, bool new_best) {
  auto out = files_in(candidate_dir(c), c, r);
  if (new_best)
    out.push_back({"/teams/" + c.team + "/best_kernel.cpp", c.source, c.team});
  return out;
}

file_write team_notes(const team_spawned& t) {
  std::string out = "# Team " + t.team + "\n\n- strategy: " + t.strategy
                    + "\n- agents:";
  for (const auto& a : t.agents)
    out += " " + a;
  out += "\n- starts from: "
         + (t.parent.empty() ? std::string{"the task's baseline"} : t.parent)
         + "\n- why: " + t.reason + "\n";
  return {"/teams/" + t.team + "/notes.md", out, "supervisor"};
}

} // namespace eat
