#include "persistence/lmdb_error.hpp"

#include <string>

#include <lmdb.h>

#include "actors/protocol/error.hpp"

namespace eat::persistence {

caf::error lmdb_error(std::string_view op, int rc, std::string_view dir) {
  std::string what{op};
  what += " failed in store at ";
  what += dir;
  what += ": ";
  what += mdb_strerror(rc);
  return make_error(error::store_failure, std::move(what));
}

} // namespace eat::persistence
