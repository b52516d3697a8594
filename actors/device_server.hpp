// The device actor: owns one devices::device and runs one stage at a time,
// in mailbox order. Both stages block (compiler and runner processes, GPU
// syncs), so spawn it detached: `sys.spawn<caf::detached>(device_server,
// dev)`. A device pool (actors/device_pool.hpp) drives it with run and
// health requests; it also answers evaluate (both stages) for direct use.

#pragma once

#include <memory>
#include <string>

#include "actors/protocol/interfaces.hpp"
#include "actors/protocol/prepared.hpp"
#include "devices/device.hpp"

namespace eat {

/// A device actor as its pool sees it.
using device_server_actor = device_actor::extend<
  /// Timed stage only: checks and times objects compiled earlier.
  caf::replies_to<run_atom, task_spec, candidate, prepared_objects,
    uint64_t>::with<eval_result>,
  /// Replies why the device is unusable now, or "" when it is healthy.
  caf::replies_to<health_atom>::with<std::string>>;

/// Behaviour of a device actor.
device_server_actor::behavior_type device_server(
  device_server_actor::pointer self, std::shared_ptr<devices::device> dev);

/// The compile stage's product as a message, and back.
prepared_objects to_message(devices::prepared x);
devices::prepared from_message(prepared_objects x);

} // namespace eat
