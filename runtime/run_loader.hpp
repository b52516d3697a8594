// Opening a run's store and reading its history: shared by `eat run`,
// `eat resume` and `eat status`. Main thread, before any actor starts.

#pragma once

#include <filesystem>
#include <memory>

#include <caf/expected.hpp>

#include "persistence/run_history.hpp"
#include "persistence/store.hpp"

namespace eat {

/// Opens the store in `store_dir`; `map_size_mib` 0 keeps the store's size.
caf::expected<std::shared_ptr<persistence::store>>
open_run_store(const std::filesystem::path& store_dir, uint64_t map_size_mib,
               bool read_only);

/// Reads the whole log and rebuilds the run's history from it.
caf::expected<run_history> read_history(persistence::store& store);

/// Appends one event directly (before the store actor exists).
caf::expected<uint64_t> append_event(persistence::store& store,
                                     event_kind kind, std::string body);

} // namespace eat
