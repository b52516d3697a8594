// The files a run writes into its namespace (docs/store-layout.md) besides
// the log: per candidate, and per kernel an agent benchmarked with ./eval,
// its kernel, build log and a result report; per team its notes and best
// kernel. Pure functions; any thread.

#pragma once

#include <string>
#include <vector>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/event.hpp"
#include "actors/protocol/file_write.hpp"
#include "actors/protocol/result.hpp"

namespace eat {

/// "/teams/<team>/candidates/<id>/" for candidate `c`.
std::string candidate_dir(const candidate& c);

/// "/teams/<team>/evals/<id>/" for a kernel `c` that an agent benchmarked
/// with `./eval`.
std::string agent_eval_dir(const candidate& c);

/// The files of one `./eval`: kernel.cpp, result.md and, when the compiler
/// said anything, build.log, in agent_eval_dir(c).
std::vector<file_write> agent_eval_files(
  const candidate& c, const eval_result& r);

/// A markdown report of one evaluation: status, reason, per-workload
/// figures, method, device, compiler, hashes.
std::string result_markdown(const candidate& c, const eval_result& r);

/// The files of one evaluated candidate: kernel.cpp, result.md and, when the
/// compiler said anything, build.log; plus the team's best_kernel.cpp when
/// `new_best`.
std::vector<file_write> evaluation_files(const candidate& c,
                                         const eval_result& r, bool new_best);

/// The notes a team starts with: strategy, members, parent and why.
file_write team_notes(const team_spawned& t);

} // namespace eat
