#include "actors/protocol/error.hpp"

#include <caf/message.hpp>

namespace eat {

std::string to_string(error x) {
  switch (x) {
    case error::none: return "none";
    case error::invalid_config: return "invalid_config";
    case error::invalid_task: return "invalid_task";
    case error::invalid_arguments: return "invalid_arguments";
    case error::malformed_message: return "malformed_message";
    case error::store_failure: return "store_failure";
    case error::store_version_mismatch: return "store_version_mismatch";
    case error::invalid_run_dir: return "invalid_run_dir";
    case error::compile_failed: return "compile_failed";
    case error::runner_failed: return "runner_failed";
    case error::device_unavailable: return "device_unavailable";
    case error::agent_failed: return "agent_failed";
    case error::run_stopped: return "run_stopped";
    case error::io_failure: return "io_failure";
    case error::invalid_plan: return "invalid_plan";
  }
  return "unknown(" + std::to_string(static_cast<int>(x)) + ")";
}

caf::error make_error(error code) {
  return caf::error{static_cast<uint8_t>(code), error_category_atom};
}

caf::error make_error(error code, std::string what) {
  return caf::error{static_cast<uint8_t>(code), error_category_atom,
                    caf::make_message(std::move(what))};
}

error code_of(const caf::error& err) {
  if (!err || err.category() != error_category_atom)
    return error::none;
  return static_cast<error>(err.code());
}

std::string render(const caf::error& err) {
  if (!err)
    return "no error";
  if (err.category() != error_category_atom)
    return caf::to_string(err);
  std::string out = to_string(static_cast<error>(err.code()));
  const auto& ctx = err.context();
  if (ctx.match_elements<std::string>())
    out += ": " + ctx.get_as<std::string>(0);
  return out;
}

} // namespace eat
