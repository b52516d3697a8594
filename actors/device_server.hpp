// The device actor: owns one devices::device and evaluates one candidate at a
// time, in mailbox order. Evaluation blocks (compiler and runner processes),
// so spawn it detached: `sys.spawn<caf::detached>(device_server, dev)`.

#pragma once

#include <memory>

#include "actors/protocol/interfaces.hpp"
#include "devices/device.hpp"

namespace eat {

/// Behaviour of a device actor.
device_actor::behavior_type device_server(device_actor::pointer self,
                                          std::shared_ptr<devices::device> dev);

} // namespace eat
