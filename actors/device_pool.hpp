// The device pool: the one device actor that teams talk to. It spreads
// evaluations over the run's devices with exclusive time slices:
//
//   evaluate ─► compile queue ─► compile workers ─► ready queue ─► device
//   (per team,   (fair share)    (prepare(), on      (fair share,   (run(),
//    weighted)                    CPU cores, `ahead`  re-verifica-   one at a
//                                 jobs per device)    tions first)   time)
//
// After every timed stage the pool asks the device's health; a device that
// fails `drain_after` checks in a row is drained. A passed result whose
// speedup is suspiciously large is re-run at priority in a fresh process,
// with another seed and on another device where one exists, before the team
// gets its answer (BENCHMARK-PROTOCOL.md section 4). docs/harness.md
// ("Device pool") describes the whole cycle.
//
// The pool is an event-based actor; the device actors and compile workers it
// drives are detached. It owns them: when it exits it stops them and answers
// every waiting request with error::run_stopped.

#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <caf/actor_system.hpp>

#include "actors/device_server.hpp"
#include "actors/protocol/interfaces.hpp"

namespace eat {

/// Knobs of the device pool ([devices.pool] in the configuration).
struct pool_options {
  /// Compile workers; 0 picks max(1, hardware threads - 1).
  uint32_t compile_workers = 0;
  /// Cores the compile workers, and the compilers they start, may run on;
  /// empty leaves them wherever the system puts them. The runtime gives them
  /// the cores no CPU device times on, so that a compile never takes a
  /// timed sample's core.
  std::vector<int> compile_cores;
  /// Jobs compiled (or compiling) ahead per healthy device of a kind, so that
  /// a device that frees up finds its next job ready.
  uint32_t ahead = 2;
  /// Seconds a timed stage may take before the pool answers timeout and
  /// treats the device as suspect. Generous: the device's own deadline (for
  /// cpu, eval_timeout_s) should fire first.
  double slice_timeout_s = 900;
  /// Failed health checks in a row after which a device is drained.
  uint32_t drain_after = 3;
  /// Re-verify a passed speedup above this factor times the best speedup
  /// the pool has returned for the task so far (before any, the baseline's
  /// 1x). BENCHMARK-PROTOCOL.md section 4: "above 3x the current best".
  double reverify_factor = 3.0;
  /// Re-verify every passed speedup above this over the baseline ("or 10x
  /// the baseline").
  double reverify_baseline = 10.0;
  /// The re-run confirms when both speedups are within this factor of each
  /// other ("disagreement above 10 % rejects it"); otherwise the result is
  /// rejected. GPU and sim devices.
  double reverify_tolerance = 1.1;
  /// The same on cpu devices, whose fresh processes disagree more: of 48
  /// honest sgemm re-runs on the 2-core VM, 6 were more than 10 % apart, up
  /// to 16 % (docs/harness.md, "Re-verification").
  double reverify_tolerance_cpu = 1.25;
  /// Told of each drained device, as a line of text (drain_notice); none
  /// by default.
  listener_actor listener;
};

/// "device cpu0 drained: <why>; 1 cpu device left takes its work", or, with
/// none left, "...; no cpu device is left: its kind's work fails".
std::string drain_notice(const std::string& device, const std::string& why,
  const std::string& kind, size_t left);

/// The pool's interface: a device actor plus weights and status.
using device_pool_actor = device_actor::extend<
  /// Sets a team's fair share (default 1), e.g. from its budget.
  caf::reacts_to<weight_atom, std::string, double>,
  /// Replies the queues and per-device load.
  caf::replies_to<status_atom>::with<pool_status>>;

/// One device of the pool: the device (for compile workers and its caps) and
/// the detached actor that owns its timed stage.
struct pool_member {
  std::shared_ptr<devices::device> device;
  device_server_actor actor;
};

/// Spawns a device server (detached) per device and a pool over them.
device_pool_actor spawn_device_pool(caf::actor_system& sys,
  std::vector<std::shared_ptr<devices::device>> devs, pool_options opts);

/// Spawns a pool over device actors spawned by the caller (tests use this to
/// put their own device actors behind it); the pool stops them on exit.
device_pool_actor spawn_device_pool(
  caf::actor_system& sys, std::vector<pool_member> members, pool_options opts);

/// The seed of a job's re-verification, derived from its seed.
uint64_t reverify_seed(uint64_t seed);

} // namespace eat
