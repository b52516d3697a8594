// The learning document: the lessons a run has learned, each linked to the
// evaluations that support it. Lessons are appended to the event log
// (event_kind::learning_added, body: learning_entry) and never changed; a
// newer lesson can supersede an older one. `/learning.md` in the run's
// namespace is rendered from them (docs/store-layout.md, "Learning
// document").
//
// Plain value types and pure functions: no store access; use them on any
// thread. The run history (persistence/run_history.hpp) owns the list of
// entries of a run.

#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/describe.hpp"

namespace eat {

/// Who wrote a lesson.
enum class learning_author : uint8_t {
  /// The supervisor, from its diagnosis of the run.
  supervisor,
  /// A team, from its own evaluations.
  team,
  /// One agent of a team.
  agent,
  /// A person, through the control plane.
  operator_,
};
EAT_WIRE_ENUM(learning_author, operator_)

/// Returns the author kind's name: "supervisor", "team", "agent" or
/// "operator".
std::string to_string(learning_author x);

/// One lesson of the learning document.
struct learning_entry {
  /// Run-unique id, e.g. "L0001" (assigned by the writer).
  std::string id;
  /// The lesson: markdown, one paragraph.
  std::string text;
  learning_author author = learning_author::supervisor;
  /// The writing team or agent, e.g. "t1" or "t1.a2"; may be empty.
  std::string author_name;
  /// Ids of the candidates whose evaluations support the lesson.
  std::vector<std::string> evidence;
  /// Id of an earlier entry this one replaces; empty for none.
  std::string supersedes;
};
EAT_DESCRIBE(
  learning_entry, id, text, author, author_name, evidence, supersedes)

/// Checks an entry against the ones before it: its id and text are not
/// empty, its id is not used by an earlier entry, no evidence id is empty,
/// and `supersedes` (when set) names an earlier entry that no other entry
/// superseded yet. A string of white space only counts as empty. Fails with
/// error::invalid_arguments naming the entry and the rule it breaks.
caf::expected<void> check_learning(
  const learning_entry& e, const std::vector<learning_entry>& earlier);

/// Renders `/learning.md`: a title, the current lessons (those no later
/// entry supersedes) in order, then a "Superseded" section with the replaced
/// entries and what replaced them. Evidence links to
/// `/teams/<team>/candidates/<id>/result.md`, where `team_of(id)` names the
/// candidate's team; a candidate whose team is unknown (`team_of` returns an
/// empty string) is listed without a link. The output depends only on the
/// arguments. The format is described in docs/store-layout.md.
std::string render_learning(const std::vector<learning_entry>& entries,
  const std::function<std::string(const std::string&)>& team_of);

} // namespace eat
