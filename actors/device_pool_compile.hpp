// A compile worker of the device pool: a detached actor that runs the
// compile stage (devices::device::prepare) of one job at a time, so that
// compilation proceeds on CPU cores while the devices run timed stages.
// Spawned and stopped by the pool (actors/device_pool.hpp); prepare() is
// thread-safe, so several workers share the pool's devices.

#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/protocol/prepared.hpp"
#include "actors/protocol/type_ids.hpp"
#include "devices/device.hpp"

namespace eat {

/// Compiles jobs for the pool.
using compile_worker_actor = caf::typed_actor<
  /// Runs prepare() of the pool's device number `index` (argument 1).
  caf::replies_to<compile_atom, uint32_t, task_spec,
    candidate>::with<prepared_objects>>;

/// Behaviour of a compile worker over the pool's devices. With `cores`, the
/// worker's thread, and so every compiler it starts, runs only there
/// (pool_options::compile_cores).
compile_worker_actor::behavior_type compile_worker(
  compile_worker_actor::pointer self,
  std::vector<std::shared_ptr<devices::device>> devs, std::vector<int> cores);

} // namespace eat
