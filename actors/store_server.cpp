#include "actors/store_server.hpp"

#include "persistence/event_log.hpp"

namespace eat {

namespace {

/// Appends between two checks for stale LMDB reader slots.
constexpr uint64_t readers_check_interval = 256;

} // namespace

store_actor::behavior_type
store_server(store_actor::pointer, std::shared_ptr<persistence::store> store) {
  auto log = std::make_shared<persistence::event_log>(*store);
  return {
    [store, log](append_atom, event& e) -> caf::result<uint64_t> {
      auto seq = log->append(std::move(e));
      if (!seq)
        return seq.error();
      // Free reader slots of killed processes now and then (LMDB caveat).
      if (*seq % readers_check_interval == 0)
        static_cast<void>(store->check_readers());
      return *seq;
    },
    [log](read_atom, uint64_t from) -> caf::result<std::vector<event>> {
      auto events = log->read(from);
      if (!events)
        return events.error();
      return std::move(*events);
    },
  };
}

} // namespace eat
