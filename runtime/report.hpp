// Text rendering of what a run shows a person: one progress line per
// evaluation and the final report. Pure functions, so they are tested
// without a run.

#pragma once

#include <cstdint>
#include <string>

#include "actors/protocol/progress.hpp"

namespace eat {

/// "tiled loop_order=ikj tile_k=64" for a candidate's family and parameters.
std::string describe_kernel(const std::string& family, const param_map& params);

/// One line about the evaluation a progress report carries, with the best
/// of the candidate's team so far, e.g. "[ 5/24] t1-c0005 tiled ...  passed
/// 3.42x (workloads 2.90x..4.01x)  team best 4.10x (t1-c0003)  4.1s".
std::string progress_line(const team_progress& p, uint64_t done,
                          uint64_t total);

/// The final report: why the run stopped, the best speedup with its
/// per-workload figures, the number of candidates tried, and where the best
/// kernel's source is (`best_path`, empty when nothing passed).
std::string final_report(const run_summary& s, const std::string& best_path);

/// A line per device of the run's pool: its evaluations and how busy its
/// timed stages kept it, e.g. "device cpu0: 32 evaluations, timed work
/// 171.3 s of 175.0 s (97.9 %)", and why it was drained if it was.
std::string device_report(const pool_status& s);

/// `x` with `digits` decimals, e.g. fixed(2.345, 2) == "2.35".
std::string fixed(double x, int digits = 2);

/// "2026-11-30 10:58:41" (UTC) for milliseconds since the Unix epoch.
std::string format_utc(int64_t unix_ms);

/// "1.23 ms", "456 us", "78 ns".
std::string format_ns(double ns);

} // namespace eat
