// The product of a device's compile stage as a message: what compile workers
// hand to the device pool and the pool hands to a device actor's timed stage
// (actors/device_pool.hpp, actors/device_server.hpp). The same fields as
// devices::prepared (devices/device.hpp); the objects are paths on the node
// that compiled them, so the message never leaves that node.

#pragma once

#include <string>

#include "actors/protocol/describe.hpp"
#include "actors/protocol/result.hpp"

namespace eat {

/// What the compile stage produced for one candidate.
struct prepared_objects {
  /// passed when every object is ready; compile_error when the candidate
  /// does not compile; rejected when the task's own sources do not.
  eval_status status = eval_status::passed;
  std::string detail;
  /// Compiler output of the candidate (or of a task source that failed).
  std::string build_log;
  double seconds = 0;
  /// Paths of the compiled objects (backend-specific: .so files for cpu).
  std::string reference_object;
  std::string baseline_object;
  std::string candidate_object;
};
EAT_DESCRIBE(prepared_objects, status, detail, build_log, seconds,
  reference_object, baseline_object, candidate_object)

} // namespace eat
