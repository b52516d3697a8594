// The store actor: the single writer of a run's store. Every message is one
// short LMDB transaction (persistence/run_writer.hpp), committed before the
// reply, so a reply means the events and files survive a crash; an event
// that does not fit the run's history is refused with an error. LMDB calls
// block, so spawn it detached:
// `sys.spawn<caf::detached>(store_server, store, writer)`.

#pragma once

#include <memory>

#include "actors/protocol/interfaces.hpp"
#include "persistence/run_writer.hpp"
#include "persistence/store.hpp"

namespace eat {

/// Behaviour of the store actor; `writer` writes into `store`.
store_actor::behavior_type
store_server(store_actor::pointer self,
             std::shared_ptr<persistence::store> store,
             std::shared_ptr<persistence::run_writer> writer);

} // namespace eat
