// The CUDA and HIP devices: compile candidates with nvcc or hipcc for the
// GPU's architecture (devices/gpu_toolchain.hpp) and evaluate each in a
// fresh, sandboxed eat-cuda-runner / eat-hip-runner process that owns the
// device memory, times with events plus a device-wide synchronise and
// flushes L2 before every sample (devices/gpu_runner/, docs/harness.md
// "CUDA and HIP backends"). Without the toolkit at build time, a driver or
// the GPU, making one fails with error::device_unavailable and the reason.
//
// Owned by one device actor: run() from its thread, prepare() from any.
// Making a device runs a short copy-bandwidth probe on the GPU from the
// calling thread (it may block on the driver: not from an actor handler).

#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "devices/device.hpp"
#include "devices/gpu_probe.hpp"
#include "devices/options.hpp"

namespace eat::devices {

/// How a GPU device compiles and runs candidates ([devices.cuda] and
/// [devices.hip] in the configuration).
struct gpu_options {
  /// Device compiler: "nvcc" or "hipcc" by default (empty); looked up in
  /// PATH unless it has a '/'.
  std::string compiler;
  /// Host compiler of the task's reference.
  std::string host_compiler = "g++";
  /// Flags of every device compile, before the architecture flag.
  std::vector<std::string> flags = {"-O3"};
  double compile_timeout_s = 120;
  /// Wall-clock deadline of one evaluation; then its process group is killed.
  double eval_timeout_s = 300;
  /// GPUs to use, by runtime index; empty means all (make_gpu_devices).
  std::vector<int> gpus;
  /// Core the runner's host thread is pinned to; -1 picks the last one.
  int core = -1;
  /// Path of eat-cuda-runner or eat-hip-runner.
  std::string runner_path;
  /// Directory for the build cache, compiler drivers and scratch dirs.
  std::string work_dir;
  /// GPU timing: a tighter relative standard error than the CPU's.
  timing_options timing{10, 10, 0.5, 10, 0.005, 5};
  /// When eat runs as root: the user the runner switches to once the GPU
  /// runtime has opened the GPU, before it loads any kernel code
  /// (docs/harness.md, "CUDA and HIP backends"); "" keeps root. Ignored by
  /// other users, who cannot switch.
  std::string run_as = "nobody";
  /// run_as's user and group ids, filled when the device is made; -1: none.
  int64_t run_as_uid = -1;
  int64_t run_as_gid = -1;
  /// When eat is not root: whether the runner makes a user namespace of its
  /// own for its network and PID namespaces (docs/harness.md, "Sandbox");
  /// off for a GPU runtime that cannot work in one.
  bool user_namespace = true;
  /// Whether each runner is started seeing only its own GPU (its
  /// runtime's visible-devices variable, devices/gpu_visibility.hpp), so
  /// that kernel code cannot select and use another GPU of the machine.
  bool only_its_gpu = true;
  /// Peaks of the speed-of-light gate; 0 takes them from the model table
  /// and the bandwidth probe. A test seam.
  double peak_flops_override = 0;
  double peak_bw_override = 0;
};

/// Makes the CUDA device `id` on GPU `index` (fails with
/// error::device_unavailable when eat was built without CUDA, there is no
/// driver or no such GPU, or the compiler or runner is missing).
caf::expected<std::unique_ptr<device>> make_cuda_device(
  std::string id, int index, gpu_options opts);

/// Makes the HIP device `id` on GPU `index` (as make_cuda_device).
caf::expected<std::unique_ptr<device>> make_hip_device(
  std::string id, int index, gpu_options opts);

/// Makes device `id` for `gpu` as found by the probe (gpu_probe.hpp), with
/// the runtime's `versions`, without probing: make_cuda_device and
/// make_hip_device after the probe, and the seam through which the tests
/// run a whole GPU device on the CPU (docs/harness.md, "A GPU device on
/// the CPU"). Set peak_bw_override unless `gpu` is real: otherwise the
/// bandwidth probe runs on it.
caf::expected<std::unique_ptr<device>> make_gpu_device_for(
  std::string id, gpu_info gpu, std::string versions, gpu_options opts);

/// Makes one device per GPU of `backend` ("cuda" or "hip") listed in
/// `opts.gpus` (all when empty), named "<backend><index>". Fails if any
/// cannot be made, or there is no GPU.
caf::expected<std::vector<std::unique_ptr<device>>> make_gpu_devices(
  std::string_view backend, const gpu_options& opts);

} // namespace eat::devices
