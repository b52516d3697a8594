// Overriding keys of a configuration's [run] section from the command line
// (`eat run --mode flat --seed 3`, `eat compare`), by editing the TOML text so
// that the run's log stores the configuration the run really used and a
// resumed run keeps it. Plain functions; any thread.

#pragma once

#include <map>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace eat {

/// Returns `text` with each key of `values` set in its [run] table: a line
/// `key = value` replaces the key's line when present, else it is inserted
/// right after the `[run]` header (added at the end when there is none).
/// Values are TOML literals (e.g. `"flat"`, `3`). Fails with
/// error::invalid_config when `text` does not parse or [run] is an inline
/// table.
caf::expected<std::string>
with_run_keys(std::string_view text,
              const std::map<std::string, std::string>& values);

} // namespace eat
