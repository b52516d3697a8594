// Making an event of the log from the struct its kind carries
// (actors/protocol/event.hpp lists which), encoded as the log stores it.

#pragma once

#include "actors/protocol/event.hpp"
#include "actors/protocol/wire.hpp"

namespace eat {

/// An event of `kind` whose body is `body` in MessagePack; the log sets its
/// sequence number and time when it appends it.
template <class T>
event make_event(event_kind kind, const T& body) {
  event e;
  e.kind = kind;
  e.body = wire::encode(body);
  return e;
}

} // namespace eat
