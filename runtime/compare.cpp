#include "runtime/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "actors/protocol/wire.hpp"
#include "persistence/views.hpp"
#include "runtime/run_loader.hpp"

namespace eat {

std::vector<compare_row> summarize_runs(const std::vector<compare_run>& runs) {
  std::vector<compare_row> rows;
  for (const auto& r : runs) {
    auto row = std::find_if(rows.begin(), rows.end(), [&](const auto& x) {
      return x.task == r.task && x.mode == r.mode;
    });
    if (row == rows.end()) {
      rows.push_back({r.task, r.mode});
      row = rows.end() - 1;
    }
    if (!r.failure.empty()) {
      row->failed += 1;
      continue;
    }
    row->runs += 1;
    row->mean_speedup += r.best_speedup;
    row->mean_tokens += static_cast<double>(r.tokens);
    row->mean_evaluations += static_cast<double>(r.evaluations);
  }
  for (auto& row : rows) {
    if (row.runs == 0)
      continue;
    auto n = static_cast<double>(row.runs);
    row.mean_speedup /= n;
    row.mean_tokens /= n;
    row.mean_evaluations /= n;
    double ss = 0;
    for (const auto& r : runs)
      if (r.task == row.task && r.mode == row.mode && r.failure.empty())
        ss += (r.best_speedup - row.mean_speedup)
              * (r.best_speedup - row.mean_speedup);
    row.sd_speedup = row.runs > 1 ? std::sqrt(ss / (n - 1)) : 0;
  }
  return rows;
}

std::string format_table(const std::vector<compare_row>& rows) {
  std::string out = "task                 mode    runs  geomean speedup "
                    "(mean ± sd)  tokens (mean)  evaluations\n";
  for (const auto& r : rows) {
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%-20s %-7s %4zu  %9.2fx ± %-13.2f %13.0f  %11.1f%s\n",
                  r.task.c_str(), r.mode.c_str(), r.runs, r.mean_speedup,
                  r.sd_speedup, r.mean_tokens, r.mean_evaluations,
                  r.failed > 0
                    ? ("  (" + std::to_string(r.failed) + " failed)").c_str()
                    : "");
    out += line;
  }
  return out;
}

caf::expected<compare_run> read_run_result(const std::filesystem::path& dir) {
  auto store = open_run_store_dir(dir);
  if (!store)
    return store.error();
  auto records = persistence::read_views(**store);
  if (!records)
    return records.error();
  for (const auto& [key, value] : *records)
    if (key == "run") {
      auto v = wire::decode<run_view>(value);
      if (!v)
        return v.error();
      compare_run r;
      r.task = v->task;
      r.seed = v->seed;
      r.best_speedup = v->best_speedup;
      r.tokens = v->tokens;
      r.evaluations = v->evaluations;
      if (!v->finished)
        r.failure = "the run did not finish";
      return r;
    }
  return make_error(error::invalid_run_dir,
                    "run directory '" + dir.string() + "' has no run view");
}

} // namespace eat
