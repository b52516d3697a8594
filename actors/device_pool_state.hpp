// Internal state of the device pool actor (actors/device_pool.hpp): its jobs,
// devices ("slots") and queues. Owned by the pool actor; no other thread or
// actor touches it.

#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <caf/typed_response_promise.hpp>

#include "actors/device_pool.hpp"
#include "actors/device_pool_compile.hpp"
#include "actors/fair_queue.hpp"

namespace eat {

using pool_clock = std::chrono::steady_clock;

/// "No device" as a slot index.
constexpr size_t no_slot = std::numeric_limits<size_t>::max();

/// Where a job is in its cycle.
enum class job_phase { queued, compiling, ready, running };

/// One evaluate request, from arrival to answer.
struct pool_job {
  task_spec task;
  candidate cand;
  uint64_t seed = 0;
  /// Device kind that compiles and runs it (the task's backend, or sim).
  std::string kind;
  job_phase phase = job_phase::queued;
  prepared_objects objects;
  caf::typed_response_promise<eval_result> promise;
  /// Set while the job is being re-verified: its first result, the device
  /// that produced it and the seed of the re-run.
  bool reverifying = false;
  eval_result first;
  size_t first_slot = no_slot;
  uint64_t second_seed = 0;
  /// Set when the first re-run passed but disagreed, and a second re-run
  /// decides (its seed is then second_seed): the first re-run's result.
  bool tie_break = false;
  eval_result second;
};

/// One device and what the pool knows about it.
struct pool_slot {
  std::string id;
  std::string kind;
  device_server_actor actor;
  /// A timed stage (or a timed-out one) holds the device.
  bool busy = false;
  /// A health request is outstanding.
  bool checking = false;
  /// The last slice timed out: the device actor may still be blocked.
  bool suspect = false;
  bool drained = false;
  std::string why;
  uint32_t failed_checks = 0;
  uint64_t evaluations = 0;
  double busy_s = 0;
  uint64_t job = 0;
  bool started = false;
  pool_clock::time_point run_start;
  pool_clock::time_point first_dispatch;
  pool_clock::time_point last_answer;
};

struct device_pool_state {
  pool_options opts;
  std::vector<pool_slot> slots;
  std::vector<compile_worker_actor> workers;
  std::vector<bool> worker_busy;
  std::map<uint64_t, pool_job> jobs;
  uint64_t next_job = 1;
  fair_queue compile_queue;
  fair_queue ready_queue;
  /// Best passed speedup returned per task: the re-verification threshold.
  std::map<std::string, double> best;
  static inline const char* name = "eat.device_pool";
};

using device_pool_pointer
  = device_pool_actor::stateful_pointer<device_pool_state>;

/// Internal steps of the pool, shared by device_pool.cpp (requests, compile
/// stage) and device_pool_slices.cpp (timed stage, health, re-verification).
namespace pool_detail {

/// A result for `job` that failed before or outside its timed stage.
eval_result failed_result(
  const pool_job& job, eval_status status, std::string detail);

/// Answers the team (noting a passed speedup as the task's best) and
/// forgets the job.
void answer(device_pool_pointer self, uint64_t id, eval_result r);

/// Answers with a failed result.
void fail(device_pool_pointer self, uint64_t id, eval_status status,
  std::string detail);

/// A device not drained.
bool healthy(const pool_slot& s);

/// A device that may take a slice now.
bool free_slot(const pool_slot& s);

/// Devices of `kind` not drained.
size_t healthy_count(const device_pool_state& st, const std::string& kind);

/// "no healthy device of kind X: <why the last one was drained>".
std::string no_healthy(const device_pool_state& st, const std::string& kind);

/// Starts compiles while workers are free and devices want more work.
void pump_compiles(device_pool_pointer self);

/// Gives free devices their next jobs, then starts compiles.
void pump(device_pool_pointer self);

/// Asks the device in `slot` for its health; drains it after drain_after
/// failures in a row.
void check_health(device_pool_pointer self, size_t slot);

} // namespace pool_detail

/// Behaviour of the pool over `members`.
device_pool_actor::behavior_type device_pool(device_pool_pointer self,
  std::vector<pool_member> members, pool_options opts);

} // namespace eat
