// `eat tasks check`: checks that a shipped task works end to end on a
// device: its file loads, the harness accepts it, its baselines (the naive
// one and the expert, if any) pass against the reference on every
// workload, and its template instances compile, where an instance the
// template itself rejects ("invalid combination: ...") counts as a clear
// rejection, not a failure. A GPU task (backend cuda or hip) gets the same
// checks on a GPU of its backend; where there is none but a compiler for
// its backend, its reference, baselines and template instances are
// compiled instead. docs/tasks.md describes the checks.
//
// A plain function over a device the caller owns; it evaluates one thing at
// a time on the calling thread.

#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/task.hpp"
#include "devices/device.hpp"
#include "devices/options.hpp"

namespace eat {

/// Compiles a GPU task's sources without running them.
struct gpu_compile_check {
  /// What compiles, for the report, e.g. "nvcc for sm_90".
  std::string what;
  /// Compiles the task's reference, baseline and `c` (a GPU toolchain's
  /// prepare for one architecture).
  std::function<devices::prepared(const task_spec&, const candidate&)>
    prepare;
};

/// How much of a task's template space is checked.
struct task_check_options {
  /// Instances per template family checked besides its default instance
  /// (every parameter at its first value), drawn deterministically.
  uint32_t sample = 2;
  /// Seed of the sample and of the evaluations.
  uint64_t seed = 1;
  /// By backend ("cuda", "hip"): how GPU tasks of that backend are
  /// compiled. A GPU task whose backend has none is only loaded.
  std::map<std::string, gpu_compile_check> gpu_compilers;
  /// A workloads file used instead of the task's own (task_overrides).
  std::filesystem::path workloads;
  /// By backend ("cuda", "hip"): the device GPU tasks of that backend run
  /// on, made when the first such task is checked; null where none can be
  /// made (no GPU, driver or runner), and then gpu_compilers applies.
  std::function<devices::device*(const std::string& backend)> gpu_device;
};

/// CPU device options for checking: the runner at `runner_path`, caches in
/// `work_dir`, the usual correctness checks but only a few timed samples
/// (a check needs a verdict, not a precise time).
devices::cpu_options task_check_cpu_options(
  std::string runner_path, std::string work_dir);

/// The outcome of one check.
struct task_check_line {
  std::string task;
  /// What was checked, e.g. "loads", "baseline", "expert",
  /// "template packed{mr=1,nr=16,kc=64,mc=16}".
  std::string what;
  bool ok = false;
  /// Why it failed, or a short note when it passed.
  std::string detail;
};

/// Called after each check, for progress output.
using task_check_report = std::function<void(const task_check_line&)>;

/// Names an instance: "packed{mr=1,nr=16}", parameters in the family's order.
std::string instance_name(const template_family& family, const param_map& p);

/// The instances checked for `family`: its default first, then up to
/// `sample` other distinct instances drawn with `seed`.
std::vector<param_map> sample_instances(
  const template_family& family, uint32_t sample, uint64_t seed);

/// Runs every check of `task` on `dev`, reporting each line as it is done.
/// Tasks for another backend than "cpu" run the same checks on the device
/// `opts.gpu_device` gives for their backend. Without one they cannot run:
/// with a compiler for their backend in `opts`, their baselines and sampled
/// template instances are compiled, then a "skipped" evaluation line (ok)
/// follows; without one, the "skipped" line alone.
std::vector<task_check_line> check_task_spec(const task_spec& task,
  devices::device& dev, const task_check_options& opts,
  const task_check_report& report);

/// Loads <tasks_dir>/<name> and checks it; a task that does not load is one
/// failed "loads" line with the loader's message.
std::vector<task_check_line> check_task_file(
  const std::filesystem::path& tasks_dir, const std::string& name,
  devices::device& dev, const task_check_options& opts,
  const task_check_report& report);

} // namespace eat
