// Lessons the supervisor draws from the evidence at the end of a run, for
// the learning document: which value of each template parameter is clearly
// best (by median speedup of the passed candidates, with at least three
// candidates for it and two for the runner-up), and how candidates
// failed. Each lesson cites the candidates that support it and supersedes
// the earlier lesson on the same subject. Pure functions; any thread.

#pragma once

#include <string>
#include <vector>

#include "actors/protocol/candidate.hpp"
#include "persistence/learning.hpp"

namespace eat {

/// Lessons from `scored` that are new or changed since `earlier`. Ids
/// continue `earlier`'s numbering ("L0001", ...).
std::vector<learning_entry>
derive_lessons(const std::vector<scored_candidate>& scored,
               const std::vector<learning_entry>& earlier);

/// The subject of a lesson: its leading "**...**", or "" when it has none.
std::string lesson_subject(const std::string& text);

} // namespace eat
