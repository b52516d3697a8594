// Opening a run's store and reading its history: shared by `eat run`,
// `eat resume` and `eat status`. Main thread, before any actor starts.

#pragma once

#include <filesystem>
#include <memory>

#include <caf/expected.hpp>

#include "persistence/run_history.hpp"
#include "persistence/run_writer.hpp"
#include "persistence/store.hpp"

namespace eat {

/// Opens the store in `store_dir`; `map_size_mib` 0 keeps the store's size.
caf::expected<std::shared_ptr<persistence::store>>
open_run_store(const std::filesystem::path& store_dir, uint64_t map_size_mib,
               bool read_only);

/// Opens the store of the run in `run_dir` read-only, failing with
/// invalid_run_dir when it is not a run directory. For commands that only
/// read (status, fs, history); they work while the run goes on.
caf::expected<std::shared_ptr<persistence::store>>
open_run_store_dir(const std::filesystem::path& run_dir);

/// Opens the single writer of `store` (rebuilding the history).
caf::expected<std::shared_ptr<persistence::run_writer>>
open_run_writer(persistence::store& store);

/// Commits one event with `files` directly (before the store actor exists).
caf::expected<uint64_t> commit_event(persistence::run_writer& writer,
                                     event_kind kind, std::string body,
                                     std::vector<file_write> files = {});

} // namespace eat
