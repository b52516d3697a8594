// A GPU runner started with an option instead of a request answers a
// question about the machine's GPUs in a process of its own, so that eat
// never opens a GPU context (docs/harness.md, "CUDA and HIP backends"):
//
//   eat-cuda-runner --probe            every GPU and the runtime's versions
//   eat-cuda-runner --health INDEX     a known kernel run and checked
//   eat-cuda-runner --bandwidth INDEX  device-to-device copy bandwidth
//
// The answer is one gpu_service_reply (devices/gpu_runner_protocol.hpp)
// written on fd 4; eat's side is devices/gpu_probe.hpp. Exit codes: 0
// after the reply, 2 for options it does not know, 4 if the reply cannot
// be written.

#pragma once

#include "devices/gpu_runner/gpu_api.hpp"

namespace eat::devices {

/// True if the runner was given options: a question, not an evaluation.
bool is_gpu_service_call(int argc);

/// Answers the question of `argv` with `api` on fd 4 and returns the exit
/// code; the usage on stderr and 2 for options it does not know.
int serve_gpu_question(gpu_api& api, int argc, char** argv);

/// The backends' answers, linked into their runner only
/// (devices/cuda/cuda_probe.cu and cuda_bandwidth.cpp, devices/hip/).
gpu_probe_result probe_cuda();
gpu_health check_cuda(int index);
caf::expected<double> measure_cuda_copy_bandwidth(int index);
gpu_probe_result probe_hip();
gpu_health check_hip(int index);
caf::expected<double> measure_hip_copy_bandwidth(int index);

} // namespace eat::devices
