// What GPUs this machine has, per backend, a health check that runs a real
// kernel on one, and its copy bandwidth. Each question is answered by the
// backend's runner (eat-cuda-runner, eat-hip-runner) in a process of its
// own (devices/gpu_runner/gpu_service.hpp): eat itself never opens a GPU
// context, so that a runner can have the GPU in the EXCLUSIVE_PROCESS
// compute mode, a GPU fault never leaves eat with a broken context, and
// eat does not load the GPU runtime at all (it starts on machines without
// one). Used by `eat devices`; the CUDA and HIP device backends build on
// it. Without the runner, a backend whose toolkit was not found at
// configure time (cmake/Gpu.cmake) reports that eat was built without it. Calls
// block for as long as the runner runs (seconds): not from actor handlers that
// run on the cooperative scheduler.

#pragma once

#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "devices/gpu_probe.hpp"

namespace eat::devices {

/// The GPUs of `backend` ("cuda" or "hip") as `runner --probe` sees them,
/// `runner` being that backend's runner executable. A runner that cannot
/// be started, fails or answers garbage makes `error` say so, with its
/// output (a loader's "cannot open shared object file", say).
gpu_probe_result probe_gpus(
  const std::string& backend, const std::string& runner);

/// Runs `runner --health INDEX`: a known kernel on GPU `index`, checked.
gpu_health check_gpu(
  const std::string& backend, const std::string& runner, int index);

/// Runs `runner --bandwidth INDEX`: device-to-device copies on GPU
/// `index`, counting bytes read plus bytes written a second.
caf::expected<double> measure_copy_bandwidth(
  const std::string& backend, const std::string& runner, int index);

/// For "cuda": holds every NVIDIA GPU's device file (/dev/nvidia0, ...)
/// open while a returned pointer lives, as nvidia-persistenced does, so
/// that the driver keeps the GPUs initialised between runners (it would
/// otherwise tear a GPU down when its last runner exits, and the next one
/// would pay the 1 - 3 s of setting it up again). Opens no context. One
/// set of files for all callers; files that cannot be opened are skipped.
/// For other backends: nothing to hold (null). `dev_dir`: where the
/// device files are (another folder in tests).
std::shared_ptr<const void> keep_initialised(
  const std::string& backend, const std::string& dev_dir = "/dev");

} // namespace eat::devices
