// Events for the tests of the log and of what reads it: a raw body, or a
// message encoded as the run writer encodes it.

#pragma once

#include <string>
#include <utility>

#include "actors/protocol/event.hpp"
#include "actors/protocol/wire.hpp"

namespace eat::test {

/// An event of `kind` whose body is `body`.
inline event make_event(
  std::string body, event_kind kind = event_kind::candidate_submitted) {
  event e;
  e.kind = kind;
  e.body = std::move(body);
  return e;
}

/// An event of `kind` whose body is `body`, encoded for the log.
template<class T>
event encoded_event(event_kind kind, const T& body) {
  event e;
  e.kind = kind;
  e.body = wire::encode(body);
  return e;
}

} // namespace eat::test
