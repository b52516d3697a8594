#include "actors/store_server.hpp"

#include "persistence/event_log.hpp"
#include "persistence/file_tree.hpp"

namespace eat {

namespace {

/// Commits between two checks for stale LMDB reader slots.
constexpr uint64_t readers_check_interval = 256;

} // namespace

store_actor::behavior_type
store_server(store_actor::pointer, std::shared_ptr<persistence::store> store,
             std::shared_ptr<persistence::run_writer> writer) {
  auto commits = std::make_shared<uint64_t>(0);
  auto commit = [=](std::vector<event> events, std::vector<file_write> files)
    -> caf::result<uint64_t> {
    auto seqs = writer->commit(std::move(events), std::move(files));
    if (!seqs)
      return seqs.error();
    // Free reader slots of killed processes now and then (LMDB caveat).
    if (++*commits % readers_check_interval == 0)
      static_cast<void>(store->check_readers());
    return seqs->empty() ? uint64_t{0} : seqs->back();
  };
  return {
    [=](append_atom, event& e) { return commit({std::move(e)}, {}); },
    [=](commit_atom, std::vector<event>& events,
        std::vector<file_write>& files) {
      return commit(std::move(events), std::move(files));
    },
    [store](read_atom, uint64_t from) -> caf::result<std::vector<event>> {
      auto events = persistence::event_log{*store}.read(from);
      if (!events)
        return events.error();
      return std::move(*events);
    },
    [store](file_atom, const std::string& path,
            uint64_t version) -> caf::result<std::string> {
      auto bytes = persistence::file_tree{*store}.get(path, version);
      if (!bytes)
        return bytes.error();
      return std::move(*bytes);
    },
  };
}

} // namespace eat
