// The CPU device: compiles candidates with the system C++ compiler into
// shared objects (devices/compiler.hpp) and evaluates each in a fresh,
// sandboxed eat-runner process pinned to one core (devices/runner_client.hpp,
// devices/runner/). What it checks and measures: docs/harness.md.
//
// Owned by one device actor; evaluate() runs on that actor's thread. Several
// CPU devices may share a work_dir (the build cache is safe to share).

#pragma once

#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "devices/device.hpp"
#include "devices/options.hpp"

namespace eat::devices {

/// Makes the CPU device `id` (fails if the compiler or runner is missing,
/// or work_dir cannot be created).
caf::expected<std::unique_ptr<device>> make_cpu_device(
  std::string id, cpu_options opts);

/// Returns the core the runner pins to for `requested`: itself if this
/// process may run there, the last core it may run on for -1; fails with
/// error::invalid_config otherwise.
caf::expected<int> resolve_core(int requested);

/// The cores this process may run on, less `taken` (the cores CPU devices
/// time on); all of them when that would leave none.
std::vector<int> cores_besides(const std::vector<int>& taken);

/// Where the work beside the CPU devices' timing goes.
struct core_plan {
  /// The core GPU runners' host threads are pinned to: the last core no
  /// CPU device times on (the last core when they take every one).
  int gpu_host = -1;
  /// The compile workers' cores: those of neither the CPU devices nor
  /// `gpu_host`, else those besides the CPU devices' (cores_besides).
  std::vector<int> compile;
};

/// Plans the cores around `timed`, the CPU devices' cores; `gpus`: whether
/// GPU devices take `gpu_host` (else the compile workers may).
core_plan plan_cores(const std::vector<int>& timed, bool gpus);

/// Restricts the calling thread to `cores`; the processes it starts from
/// then on inherit the mask. Does nothing for an empty list. Returns "" or
/// why it failed.
std::string pin_thread(const std::vector<int>& cores);

/// Pins the calling thread to `cores` (as pin_thread) for its lifetime,
/// then gives it back the cores it had; the threads and processes it
/// starts meanwhile inherit the pinned mask and keep it. Does nothing for
/// an empty list.
class pinned_thread {
public:
  explicit pinned_thread(const std::vector<int>& cores);
  ~pinned_thread();
  pinned_thread(const pinned_thread&) = delete;
  pinned_thread& operator=(const pinned_thread&) = delete;

  /// "" or why the thread could not be pinned (it kept its cores).
  const std::string& error() const {
    return error_;
  }

private:
  std::vector<int> saved_;
  std::string error_;
};

/// The cores the calling thread may run on (empty if it cannot be read).
std::vector<int> thread_cores();

/// The CPU's model name from /proc/cpuinfo ("unknown CPU" when absent).
std::string cpu_model();

/// "x86_64" followed by the SIMD extensions that matter for kernels, e.g.
/// "x86_64 avx512f avx2 avx512_bf16".
std::string cpu_arch();

} // namespace eat::devices
