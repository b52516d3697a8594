// Events for the tests of the log and of what reads it: a raw body here,
// or a message encoded as the runtime encodes it (eat::make_event,
// actors/protocol/event_body.hpp).

#pragma once

#include <string>
#include <utility>

#include "actors/protocol/event.hpp"
#include "actors/protocol/event_body.hpp"

namespace eat::test {

/// An event of `kind` whose body is `body`.
inline event make_event(
  std::string body, event_kind kind = event_kind::candidate_submitted) {
  event e;
  e.kind = kind;
  e.body = std::move(body);
  return e;
}

} // namespace eat::test
