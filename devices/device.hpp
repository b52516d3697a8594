// A compute device that evaluates candidates: the seam between the device
// actors (actors/device_server.hpp, actors/device_pool.hpp) and a concrete
// backend such as the CPU device (devices/cpu_device.hpp), and the interface
// tests fake.
//
// An evaluation has two stages. prepare() is the compile stage: it builds the
// reference, baseline and candidate objects and never needs the device
// itself, so it runs on a CPU pool, ahead of the device and concurrently with
// other prepare() calls. run() is the timed stage: exactly one run() at a
// time per device, called by the actor that owns the device from its own
// (detached) thread; implementations need not make run() thread-safe.

#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/result.hpp"
#include "actors/protocol/task.hpp"

namespace eat::devices {

/// What a device is and can do, for scheduling and the speed-of-light gate.
struct device_caps {
  /// Backend: "cpu", "cuda", "hip" or "sim".
  std::string kind;
  /// Model name, e.g. "AMD EPYC 9R14" or "NVIDIA H200".
  std::string model;
  /// Architecture, e.g. "x86_64 avx512f", "sm_90", "gfx90a".
  std::string arch;
  /// Memory available to a kernel, in bytes (0 when unknown).
  uint64_t memory_bytes = 0;
  /// Peak floating-point rate and memory bandwidth: a CPU core's as its
  /// probe measured them (its speed-of-light gate allows
  /// cpu_peak_safety_factor times these), a GPU's from the table by model
  /// or measured.
  double peak_flops = 0;
  double peak_bytes_per_s = 0;
  /// Stable identity across restarts, e.g. "cpu:core1:AMD EPYC 9R14" or a
  /// GPU's UUID.
  std::string identity;
  /// Facts of the compile target that template constraints may name
  /// (actors/agent/constraints.hpp): a CPU's "simd_floats" and
  /// "vector_registers" under its compiler flags (compiler::target_facts);
  /// empty for GPUs and simulated devices.
  std::map<std::string, int64_t> target;
};

/// What the compile stage produced for one candidate.
struct prepared {
  /// passed when every object is ready; compile_error when the candidate
  /// does not compile; rejected when the task's own sources do not.
  eval_status status = eval_status::passed;
  std::string detail;
  /// Compiler output of the candidate (or of a task source that failed).
  std::string build_log;
  double seconds = 0;
  /// Paths of the compiled objects (backend-specific: .so files for cpu).
  std::string reference_object;
  std::string baseline_object;
  std::string candidate_object;
};

/// Whether every object file `p` names still exists (the compile cache may
/// have trimmed one prepared long ago: devices/compile_cache.hpp). Names
/// without a '/' (the sim device's) are not files and count as existing.
bool objects_exist(const prepared& p);

class device;

/// The objects a run uses: `objects`, or, where the compile cache trimmed
/// one of them while it waited, `d`'s compiled again into `again`.
const prepared& kept_or_again(const device& d, const task_spec& task,
  const candidate& c, const prepared& objects, prepared& again);

/// A result begun for `c` run with `seed` on `device`, whose objects
/// `compiler` built: its identity, compile time and build log.
eval_result begin_result(const candidate& c, uint64_t seed,
  const prepared& objects, std::string device, std::string compiler);

/// A compute device that evaluates candidates.
class device {
public:
  virtual ~device();

  /// Stable id within the run, e.g. "cpu0".
  virtual std::string id() const = 0;

  /// Human-readable identity: model, pinned core, compiler version.
  virtual std::string description() const = 0;

  /// Kind, model, architecture, memory, peaks and stable identity.
  virtual device_caps caps() const = 0;

  /// Compile stage: builds the objects `c` needs. Thread-safe; never holds
  /// the device. Never throws: failures are statuses.
  virtual prepared prepare(const task_spec& task, const candidate& c) const
    = 0;

  /// Timed stage: checks and times the prepared objects against the task's
  /// baseline with inputs drawn from `seed`. One call at a time. Never
  /// throws: every failure is a status in the result (incorrect,
  /// runtime_error, timeout, rejected), and a failed `objects` is returned
  /// as the result's status.
  virtual eval_result run(const task_spec& task, const candidate& c,
                          const prepared& objects, uint64_t seed)
    = 0;

  /// Returns why the device is unusable now (a failed health check), or ""
  /// when it is healthy. The default reports healthy.
  virtual std::string check_health();

  /// Both stages in a row: run(task, c, prepare(task, c), seed).
  eval_result evaluate(const task_spec& task, const candidate& c,
                       uint64_t seed);
};

} // namespace eat::devices
