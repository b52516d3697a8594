// The store actor: the single writer of a run's store. Every append is one
// short LMDB transaction, committed before the reply, so a reply means the
// event survives a crash. LMDB calls block, so spawn it detached:
// `sys.spawn<caf::detached>(store_server, store)`.

#pragma once

#include <memory>

#include "actors/protocol/interfaces.hpp"
#include "persistence/store.hpp"

namespace eat {

/// Behaviour of the store actor.
store_actor::behavior_type
store_server(store_actor::pointer self,
             std::shared_ptr<persistence::store> store);

} // namespace eat
