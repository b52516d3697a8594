// The listener that shows a run's progress: prints one line per finished
// evaluation to an output stream (stdout for `eat run`). Event-based; the
// stream write is short and buffered.

#pragma once

#include <cstdint>
#include <ostream>

#include "actors/protocol/interfaces.hpp"

namespace eat {

/// Behaviour of the printer; `done` evaluations were finished before this
/// process started, `total` is the run's max_evaluations.
listener_actor::behavior_type progress_printer(listener_actor::pointer self,
                                               std::ostream* out,
                                               uint64_t done, uint64_t total);

} // namespace eat
