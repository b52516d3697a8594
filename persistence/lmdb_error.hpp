// Turns LMDB return codes into eat errors (error::store_failure) that name
// the failed operation, the store directory and mdb_strerror's text.
//
// Thread safety: stateless; usable from any thread.

#pragma once

#include <string_view>

#include <caf/error.hpp>

namespace eat::persistence {

/// Builds store_failure "OP failed in store at DIR: TEXT" for LMDB code `rc`.
caf::error lmdb_error(std::string_view op, int rc, std::string_view dir);

} // namespace eat::persistence
