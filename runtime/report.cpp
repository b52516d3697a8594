#include "runtime/report.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace eat {

namespace {

std::string first_line(const std::string& s) {
  auto end = s.find('\n');
  auto line = s.substr(0, end);
  return line.size() > 160 ? line.substr(0, 157) + "..." : line;
}

} // namespace

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, x);
  return buf;
}

std::string format_utc(int64_t unix_ms) {
  auto t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string format_ns(double ns) {
  if (ns >= 1e9)
    return fixed(ns / 1e9, 2) + " s";
  if (ns >= 1e6)
    return fixed(ns / 1e6, 2) + " ms";
  if (ns >= 1e3)
    return fixed(ns / 1e3, 1) + " us";
  return fixed(ns, 0) + " ns";
}

std::string describe_kernel(
  const std::string& family, const param_map& params) {
  auto out = family;
  for (const auto& [k, v] : params)
    out += " " + k + "=" + v;
  return out;
}

std::string progress_line(
  const team_progress& p, uint64_t done, uint64_t total) {
  const auto& c = p.last_candidate;
  const auto& r = p.last_result;
  auto width = std::to_string(total).size();
  auto n = std::to_string(done);
  auto out = "[" + std::string(width > n.size() ? width - n.size() : 0, ' ') + n
             + "/" + std::to_string(total) + "] " + c.id + " "
             + describe_kernel(c.family, c.params) + "  ";
  if (r.status == eval_status::passed) {
    double low = 1e300, high = 0;
    for (const auto& w : r.workloads) {
      low = std::min(low, w.speedup);
      high = std::max(high, w.speedup);
    }
    out += "passed " + fixed(r.geomean_speedup, 2) + "x (workloads "
           + fixed(low, 2) + "x.." + fixed(high, 2) + "x)";
  } else {
    out += to_string(r.status) + ": " + first_line(r.detail);
  }
  out += "  team best " + fixed(p.best_speedup, 2) + "x";
  if (!p.best_candidate.empty())
    out += " (" + p.best_candidate + ")";
  out += "  " + fixed(r.compile_s + r.run_s, 1) + "s";
  return out;
}

std::string device_report(const pool_status& s) {
  std::string out;
  for (const auto& d : s.devices) {
    out += "device " + d.device + ": " + std::to_string(d.evaluations)
           + (d.evaluations == 1 ? " evaluation" : " evaluations");
    if (d.wall_s > 0)
      out += ", timed work " + fixed(d.busy_s, 1) + " s of "
             + fixed(d.wall_s, 1) + " s ("
             + fixed(100 * d.busy_s / d.wall_s, 1) + " %)";
    if (d.drained)
      out += ", drained: " + d.why;
    out += "\n";
  }
  return out;
}

std::string final_report(const run_summary& s, const std::string& best_path) {
  std::string out = "run " + s.run_id + " stopped: " + s.reason + "\n";
  out += "candidates tried: " + std::to_string(s.evaluations) + " ("
         + std::to_string(s.passed)
         + " passed), tokens spent: " + std::to_string(s.tokens) + "\n";
  if (s.best_candidate.empty())
    return out + "no candidate passed the checks; no speedup to report\n";
  out += "best speedup: " + fixed(s.best_speedup, 2)
         + "x over the naive baseline (geomean over "
         + std::to_string(s.best_workloads.size()) + " workloads), candidate "
         + s.best_candidate + ": "
         + describe_kernel(s.best_family, s.best_params) + "\n";
  for (const auto& w : s.best_workloads)
    out += "  " + w.workload + ": baseline " + format_ns(w.baseline_median_ns)
           + ", candidate " + format_ns(w.candidate_median_ns) + ", "
           + fixed(w.speedup, 2) + "x [95% CI " + fixed(w.speedup_low, 2) + ", "
           + fixed(w.speedup_high, 2) + "], n=" + std::to_string(w.samples)
           + (w.sol_fraction > 0 ? ", " + fixed(100 * w.sol_fraction, 1)
                                     + "% of speed of light"
                                 : std::string{})
           + "\n";
  out += "best kernel source: " + best_path + "\n";
  return out;
}

} // namespace eat
