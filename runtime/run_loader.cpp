#include "runtime/run_loader.hpp"

#include "persistence/event_log.hpp"

namespace eat {

caf::expected<std::shared_ptr<persistence::store>> open_run_store(
  const std::filesystem::path& store_dir, uint64_t map_size_mib,
  bool read_only) {
  persistence::store_options opts;
  if (map_size_mib > 0)
    opts.map_size = map_size_mib << 20;
  opts.read_only = read_only;
  auto st = persistence::store::open(store_dir, opts);
  if (!st)
    return st.error();
  return std::shared_ptr<persistence::store>{std::move(*st)};
}

caf::expected<run_history> read_history(persistence::store& store) {
  persistence::event_log log{store};
  auto events = log.read(1);
  if (!events)
    return events.error();
  return rebuild(*events);
}

caf::expected<uint64_t> append_event(
  persistence::store& store, event_kind kind, std::string body) {
  persistence::event_log log{store};
  event e;
  e.kind = kind;
  e.body = std::move(body);
  return log.append(std::move(e));
}

} // namespace eat
