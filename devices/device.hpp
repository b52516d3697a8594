// A compute device that evaluates candidates: the seam between the device
// actor (actors/device_server.hpp) and a concrete backend such as the CPU
// device (devices/cpu_device.hpp), and the interface tests fake.
//
// One evaluation at a time: the device actor that owns a device calls it from
// its own (detached) thread; implementations need not be thread-safe.

#pragma once

#include <cstdint>
#include <string>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/result.hpp"
#include "actors/protocol/task.hpp"

namespace eat::devices {

/// A compute device that evaluates candidates. One evaluation at a time; the
/// device actor that owns it calls it from its own (detached) thread.
class device {
public:
  virtual ~device();

  /// Stable id, e.g. "cpu0".
  virtual std::string id() const = 0;

  /// Human-readable identity: CPU model, pinned core, compiler version.
  virtual std::string description() const = 0;

  /// Compiles, checks and times `c` against the task's baseline with inputs
  /// drawn from `seed`. Never throws: every failure is a status in the result
  /// (compile_error, incorrect, runtime_error, timeout, rejected).
  virtual eat::eval_result evaluate(
    const eat::task_spec& task, const eat::candidate& c, uint64_t seed)
    = 0;
};

} // namespace eat::devices
