// The rotating input sets of the timing phase (BENCHMARK-PROTOCOL.md
// section 3) and the schedule that pairs them with the two kernels.
//
// Rounds run in blocks. At the start of a block every set's floating
// inputs are drawn anew (a new generation of contents); within the block
// each kernel uses each set exactly once, the candidate in set order and
// the baseline half the sets further on, so that neither kernel ever runs
// on inputs the other has just pulled into the cache, and no kernel sees
// the same contents twice. At the end of a block both kernels have an
// output for every set's current contents, and every candidate output is
// compared with the baseline's.
//
// With kernel processes (untrusted kernels) the sets are drawn one at a
// time instead: each round redraws the candidate's set just before its
// call, and the baseline runs on the set the candidate had the round
// before (sets_of_drawn_round); every call's inputs are then flushed from
// the caches, as the rotation no longer keeps them cold.
//
// Runs inside eat-runner, single-threaded; plain values.

#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "devices/kinds/problem.hpp"
#include "devices/runner/checks.hpp"
#include "devices/runner/secrets.hpp"

namespace eat::devices {

/// Poisoned outputs for one kernel and the pointers a call receives.
struct kernel_outputs {
  std::vector<guarded_output> outs;
  std::vector<void*> pointers;

  explicit kernel_outputs(const problem& p);

  void poison_data();
};

/// One set of inputs with outputs for each kernel, and which contents each
/// kernel's outputs were computed from.
struct input_set {
  std::vector<typed_buffer> inputs;
  std::vector<const void*> pointers;
  kernel_outputs baseline_out;
  kernel_outputs candidate_out;
  /// Generation of the contents (1 when drawn, +1 at each redraw).
  uint64_t generation = 1;
  /// Generation each kernel's outputs belong to; 0 before its first call.
  uint64_t baseline_generation = 0;
  uint64_t candidate_generation = 0;
  /// Generation whose candidate outputs were last offered to the timed
  /// sample (timed_sample.hpp); 0 before the first.
  uint64_t offered_generation = 0;
  /// With kernel processes: keyed hashes (keyed_hash) of the inputs as
  /// drawn or redrawn, and of the baseline's outputs after its last call.
  uint64_t inputs_hash = 0;
  uint64_t baseline_out_hash = 0;
  /// With kernel processes: the keyed hash of the candidate's outputs
  /// after its last call (they cannot be finished later).
  uint64_t candidate_out_hash = 0;
};

/// Size of the largest cache of CPU 0, the last level, as sysfs describes
/// it (sysconf's figures are wrong on some VMs: 320 MiB of L3 reported for
/// 32 MiB); sysconf's L2 and L3 when sysfs is unreadable; 0 if unknown.
uint64_t last_level_cache_bytes();

/// How a workload's timed calls find their inputs cold (BENCHMARK-PROTOCOL
/// "rotating input sets larger than the last-level cache, or a flush").
struct rotation_plan {
  /// Bytes the input sets should exceed together.
  uint64_t target_bytes = 0;
  /// Flush each timed call's inputs from the caches just before it, because
  /// the rotation does not exceed twice the last-level cache.
  bool flush_inputs = false;
  /// Bytes the sets span at most (0: target_bytes); a rotation cut short
  /// of its target has its timed calls' inputs flushed (flushes).
  uint64_t span_bytes = 0;
};

/// Bytes the sets of `plan` should span together: its span, or its target.
uint64_t rotation_span(const rotation_plan& plan);

/// Input sets rotate through at most this many bytes: drawing a GiB of
/// inputs for every workload (a VM that reports its host's 508 MiB L3)
/// cost seconds per evaluation, more than a tiny kernel's whole budget.
constexpr uint64_t max_rotation_bytes = uint64_t{128} << 20;

/// The plan for a last-level cache of `llc_bytes` (0: unknown):
/// max(2 x LLC, 32 MiB) without a flush while that is at most
/// max_rotation_bytes; otherwise max_rotation_bytes and a flush (and a
/// flush when the cache's size is unknown). Pure.
rotation_plan plan_rotation(uint64_t llc_bytes);

/// Input sets span at most this many bytes when each kernel runs in a
/// process of its own (kernel_process_rotation).
constexpr uint64_t kernel_process_span_bytes = uint64_t{8} << 20;

/// The plan with kernel processes: `usual` with its sets spanning at most
/// kernel_process_span_bytes, so that a rotation cut short by it flushes
/// the timed calls' inputs instead. Three address spaces take turns on the
/// core then (the runner's and the two kernels'), and on the development VM
/// a kernel's first touches of pages after a switch cost more the more
/// memory the rotation spans: in its own process a packed sgemm measured
/// 12 - 45 % slower than in the runner with 64 MiB of sets, about 6 - 12 %
/// with 8 MiB and a flush (docs/harness.md, "Kernel processes"). Pure.
rotation_plan kernel_process_rotation(const rotation_plan& usual);

/// Writes back and evicts `bytes` at `p` from every cache level (clflush
/// per line, then a fence; x86-64 only, a no-op elsewhere).
void flush_from_caches(const void* p, size_t bytes);

/// flush_from_caches on every input buffer of `set`.
void flush_inputs(const input_set& set);

/// Draws `count` input sets of `p` from `workload_seed`.
std::vector<input_set> make_sets(
  const problem& p, size_t count, uint64_t workload_seed);

/// Input sets a workload rotates through at most. Past this, more sets of a
/// tiny workload only cost untimed time (an 8x8x8 sgemm drew 131,072 sets
/// of 1 KiB toward 128 MiB: 1.6 s of each evaluation); a rotation cut short
/// of its target has its timed calls' inputs flushed instead (flushes).
constexpr size_t max_sets = 4096;

/// Number of input sets: enough that together their `set_bytes` of data
/// exceed `target` bytes, at least 2 and at most max_sets, while their
/// `footprint` (the memory a set takes, set_footprint; `set_bytes` when 0)
/// stays within `memory_budget` (at least 1).
size_t set_count(uint64_t target, uint64_t memory_budget, uint64_t set_bytes,
  uint64_t footprint = 0);

/// Whether the timed calls of a rotation through `count` sets of
/// `set_bytes` flush their inputs: when the plan says so, or when the sets
/// hold less than the plan's target (cut by max_sets or by the memory
/// budget), so that inputs are never timed warm from the cache.
bool flushes(const rotation_plan& plan, size_t count, uint64_t set_bytes);

/// Whether the timed calls flush their inputs, given how the sets are
/// drawn: with `drawn_each_round` (kernel processes, sets_of_drawn_round)
/// always, as the runner has just written the candidate's set and no
/// rotation keeps it cold; otherwise as flushes() says.
bool flushes_timed_calls(const rotation_plan& plan, size_t count,
  uint64_t set_bytes, bool drawn_each_round);

/// The memory one input set of `p` takes: each buffer as page_allocator
/// allocates it (guard zones included), plus the allocator's and the set's
/// own bookkeeping. Tiny workloads rotate through millions of sets, whose
/// buffers each take a cache line or more.
uint64_t set_footprint(const problem& p);

/// The sets of round `round`: {baseline's, candidate's}.
struct round_sets {
  size_t baseline = 0;
  size_t candidate = 0;
};

/// Pairs round `round` with its sets, as the header comment says.
round_sets sets_of_round(size_t round, size_t count);

/// The sets of round `round` with kernel processes, where each round
/// first redraws the candidate's set: the candidate on set round % count,
/// the baseline on the set the candidate had the round before. Every
/// candidate call meets contents drawn after its previous call: it cannot
/// compute the outputs of its later calls ahead (a red-team candidate
/// computed all of a block's in its first call and copied them in the
/// others, whose median was the copy: passed 5.9x for the naive loop).
round_sets sets_of_drawn_round(size_t round, size_t count);

/// True when round `round` opens a block (redraw every set first).
inline bool starts_block(size_t round, size_t count) {
  return round % count == 0;
}

/// Draws every set's floating inputs anew (problem::redraw), each from a
/// seed of `gen`: a new generation of contents. A kernel that kept a set's
/// inputs and outputs from its last call finds no element unchanged; when
/// only one element changed per block, one that recomputed what the change
/// touched (for gemm, a row and a column of C) passed every check.
void redraw_all(
  const problem& p, std::vector<input_set>& sets, secret_rng& gen);

/// Returns why a set's candidate outputs are wrong, or "": the guard zones,
/// and, when both kernels' outputs belong to the set's current contents,
/// the outputs against the baseline's (each carries its own rounding, hence
/// doubled tolerances).
std::string check_set(const problem& p, const input_set& set);

/// Completes a partial block: runs the baseline, untimed, on every set whose
/// current contents the candidate has used but the baseline has not, so that
/// every candidate output has its baseline to compare with.
void complete_block(const problem& p, void* baseline,
  std::vector<input_set>& sets);

/// The same with `call_baseline(set)` running the baseline on a set (into
/// its baseline_out), wherever the baseline runs.
void complete_block(std::vector<input_set>& sets,
  const std::function<void(input_set&)>& call_baseline);

} // namespace eat::devices
