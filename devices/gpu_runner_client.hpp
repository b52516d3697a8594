// The GPU device's side of the runner protocol: starts eat-cuda-runner or
// eat-hip-runner in a fresh scratch directory, hands it its request on fd 3,
// collects the reply from fd 4 under a wall-clock deadline, kills the
// runner's process group, and maps how it ended to a status exactly as the
// CPU device does (interpret_runner_end in devices/runner_client.hpp).
//
// It is run_runner_bytes (devices/runner_client.hpp) with other message
// types: the request is a gpu_runner_request and the reply a
// gpu_runner_reply (devices/gpu_runner_protocol.hpp). Called from the GPU
// device's evaluating thread; returns after the runner and everything it
// started are gone and its scratch directory is removed.

#pragma once

#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "devices/gpu_runner_protocol.hpp"
#include "devices/runner_client.hpp"

namespace eat::devices {

/// How one GPU runner process went.
struct gpu_runner_outcome {
  /// The common part: status, detail, wall time and the runner_reply.
  runner_outcome common;
  /// The GPU part of the reply, when `common.reply` is set.
  std::optional<gpu_runner_reply> reply;
};

/// Runs `req` in a fresh GPU runner. Errors are failures of the machinery
/// (cannot create the scratch directory or start the runner).
caf::expected<gpu_runner_outcome> run_gpu_runner(
  const runner_launch& launch, const gpu_runner_request& req);

/// Runs the runner on raw request bytes (a test seam: malformed requests);
/// `nonce` is what the reply must carry.
caf::expected<gpu_runner_outcome> run_gpu_runner_bytes(
  const runner_launch& launch, const std::string& request, uint64_t nonce);

} // namespace eat::devices
