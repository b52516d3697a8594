// One human-readable line per event, for `eat history`. Pure; any thread.

#pragma once

#include <string>

#include "actors/protocol/event.hpp"

namespace eat {

/// "12  2026-11-30 10:35:49  evaluation_finished  t1-c0003 passed 2.72x".
/// A body that does not decode is shown as such, not hidden. Control
/// characters and bytes that are not UTF-8 are shown as \xNN.
std::string event_summary(const event& e);

} // namespace eat
