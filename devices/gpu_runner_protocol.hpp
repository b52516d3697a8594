// The messages between a GPU device (devices/gpu_device.hpp, parent) and its
// sandboxed runner (eat-cuda-runner or eat-hip-runner, devices/gpu_runner/).
// They extend the CPU runner's messages (devices/runner_protocol.hpp) with
// what only a GPU evaluation needs, and travel the same way: one MessagePack
// map read from the child's fd 3, one written to its fd 4. Because decoding
// ignores unknown keys, a gpu_runner_reply also decodes as a runner_reply,
// so the CPU side's interpretation of how a runner ended applies unchanged.
// Plain values; any thread.

#pragma once

#include <cstdint>
#include <string>

#include "devices/gpu_probe.hpp"
#include "devices/runner_protocol.hpp"

namespace eat::devices {

/// What the GPU device asks its runner to do. `limits.address_space_mib` is
/// ignored: a GPU runner sets no RLIMIT_AS (the CUDA and HIP runtimes
/// reserve far more address space than they use).
struct gpu_runner_request : runner_request {
  /// Backend the request is meant for ("cuda" or "hip"); a runner of the
  /// other backend refuses it.
  std::string backend;
  /// Runtime index of the GPU to evaluate on.
  int32_t gpu = 0;
  /// Stable identity the GPU must have (its UUID or PCI bus id); empty
  /// skips the check. Guards against renumbered GPUs.
  std::string identity;
  /// Whether the runner was started seeing only this GPU
  /// (devices/gpu_visibility.hpp): it then refuses to evaluate unless the
  /// runtime shows exactly one GPU.
  bool only_gpu = false;
};

/// The GPU runner's answer: the CPU runner's reply plus what the GPU said.
struct gpu_runner_reply : runner_reply {
  /// Model name the runtime reported for the GPU used.
  std::string gpu_name;
  /// Clocks, throttle reasons and temperatures before and after timing
  /// (NVML), or why they were not recorded.
  std::string gpu_notes;
  /// Bytes written to flush the L2 cache before each sample.
  uint64_t flush_bytes = 0;
  /// How many GPUs the runtime showed the runner, hence its kernel code.
  int32_t visible_gpus = 0;
};

EAT_DESCRIBE(gpu_runner_request, nonce, kind, dtype, atol, rtol, matched_ratio,
  max_error, deterministic, workloads, reference_so, baseline_so, candidate_so,
  seed, timing, core, limits, kernel_processes, backend, gpu, identity,
  only_gpu)
EAT_DESCRIBE(gpu_runner_reply, nonce, status, detail, workloads,
  network_isolated, pid_isolated, tasks_capped, core, kernel_uid,
  cgroup_cpu_time, kernel_processes, candidate_idle_cpu_ns,
  candidate_cpu_during_baseline_ns, others_not_taken_off,
  interrupts_not_counted, interrupt_sources, gpu_name, gpu_notes, flush_bytes,
  visible_gpus)

/// What a GPU runner started with an option instead of a request writes
/// on its fd 4 (devices/gpu_runner/gpu_service.hpp): `--probe` fills
/// `probe`, `--health INDEX` fills `health`, `--bandwidth INDEX` fills
/// `copy_bytes_per_s` or `error`. This is how eat learns about its GPUs
/// without opening a GPU context of its own.
struct gpu_service_reply {
  /// The runner's backend, "cuda" or "hip".
  std::string backend;
  gpu_probe_result probe;
  gpu_health health;
  /// Device-to-device copy bandwidth, bytes read plus written a second.
  double copy_bytes_per_s = 0;
  /// Why the bandwidth could not be measured.
  std::string error;
};

EAT_DESCRIBE(gpu_info, backend, index, name, arch, uuid, memory_bytes,
  multiprocessors, clock_khz)
EAT_DESCRIBE(gpu_probe_result, built, devices, versions, error)
EAT_DESCRIBE(gpu_health, ok, detail)
EAT_DESCRIBE(gpu_service_reply, backend, probe, health, copy_bytes_per_s, error)

} // namespace eat::devices
