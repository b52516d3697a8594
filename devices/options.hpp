// Options of the CPU device and of the timing loop. Filled from the [devices.cpu]
// and [timing] sections of the configuration (docs/config.md) by
// runtime/config.hpp; read by devices/cpu_device.hpp and the runner.
// Plain values: copy freely, use from any thread.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace eat::devices {

/// How candidates are timed (BENCHMARK-PROTOCOL.md section 3).
struct timing_options {
  /// Untimed calls before sampling, per kernel and workload.
  uint32_t warmup = 10;
  /// Paired (baseline, candidate) samples to take at least.
  uint32_t min_samples = 10;
  /// Seconds of sampling to spend at least, per workload.
  double min_time_s = 0.5;
  /// Seconds of sampling after which a workload stops regardless.
  double max_time_s = 10;
  /// Stop once the relative standard error of the candidate's median is
  /// below this (devices/stopping_rule.hpp).
  double max_rel_se = 0.01;
  /// Random input sets (secret seeds) checked against the reference.
  uint32_t check_seeds = 5;
  /// Timed calls per workload whose outputs are compared with the
  /// reference after the timing, a secret sample of them all
  /// (devices/runner/timed_sample.hpp); 0 compares them with the
  /// baseline's only.
  uint32_t reference_samples = 4;
  /// CPU devices: take the time other tasks had the core in a timed call
  /// off its sample (devices/runner/run_delay.hpp). Only
  /// bench/contention_bench turns it off, to show what it does.
  bool take_off_others = true;
  /// CPU devices: take the estimated time of the interrupts counted on
  /// the device's core off the samples (devices/runner/interrupt_cost.hpp).
  /// Only bench/contention_bench turns it off, to show what it does.
  bool take_off_interrupts = true;
};

/// How the CPU device compiles and runs candidates.
struct cpu_options {
  /// C++ compiler used for candidates, baselines and references.
  std::string compiler = "g++";
  /// Flags for candidates and baselines (the reference gets -O2 only).
  std::vector<std::string> flags = {"-O3", "-march=native", "-std=c++17"};
  double compile_timeout_s = 120;
  /// Wall-clock deadline of one evaluation; then its process group is killed.
  double eval_timeout_s = 300;
  /// Address-space limit of the runner process.
  uint64_t address_space_mib = 4096;
  /// Core the runner is pinned to; -1 picks the last online core.
  int core = -1;
  /// The user kernel code runs as when eat runs as root (the runner
  /// switches to it: devices/runner/drop_root.hpp); empty keeps root.
  /// Ignored by other users, who cannot switch.
  std::string run_as = "nobody";
  /// run_as's user and group ids, filled by make_cpu_device; -1: none.
  int64_t run_as_uid = -1;
  int64_t run_as_gid = -1;
  /// Run the baseline and the candidate each in a process of its own that
  /// shares only their buffers with the runner (devices/runner/
  /// kernel_host.hpp), so that no kernel can reach what decides its
  /// verdict; each call then costs a round trip (~11 us on the development
  /// VM), measured and taken off every sample.
  bool kernel_processes = false;
  /// Path of the eat-runner executable.
  std::string runner_path;
  /// Directory for the build cache and per-evaluation scratch directories.
  std::string work_dir;
  timing_options timing;
  /// Peak FLOP/s of the speed-of-light gate; 0 measures it when the device
  /// is made (devices/cpu_peak.hpp). A test seam: set it to check the gate.
  double peak_flops_override = 0;
  /// Peak bytes/s of the speed-of-light gate; 0 measures it.
  double peak_bw_override = 0;
};

} // namespace eat::devices
