// A secret sample of a workload's timed calls whose candidate outputs are
// compared with the reference once the timing is over
// (BENCHMARK-PROTOCOL.md section 4: every timed output is checked, "full
// comparison on a random subset").
//
// Every timed output is also compared with the baseline's on the same
// inputs, but at twice the tolerance, since both carry their own rounding.
// A kernel that tells timed calls from the checks (the checks come first,
// in bit-identical pairs) could err there by up to twice the tolerance: a
// red-team sgemm erred by 1.6 times it in its timed calls only and passed.
// The sample holds the timed calls to the tolerance itself.
//
// Reservoir sampling: the i-th timed output offered is kept with
// probability slots / i, in place of a kept one drawn at random, so that
// the kept ones are a uniform sample of all those offered. The choice is
// made after the call, from secret_rng: at its call a kernel cannot know
// whether that call will be checked. A kernel that errs in a fraction f of
// its timed calls escapes with probability about (1 - f)^slots; to move
// the median sample it must err in more than half of them.
//
// What is kept is copied into the runner's own memory (never the arena
// that the kernels' processes map), so that no kernel can change it.
//
// Used by the CPU and the GPU runners; single-threaded.

#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "devices/kinds/problem.hpp"
#include "devices/runner/code_lock.hpp"
#include "devices/runner/secrets.hpp"

namespace eat::devices {

class timed_sample {
public:
  /// A sample of at most `slots` timed calls of `p` (none with 0).
  timed_sample(const problem& p, size_t slots);

  /// Counts one more timed output offered and returns the slot it is to be
  /// kept in (keep), or nothing when the sample passes it by.
  std::optional<size_t> draw(secret_rng& gen);

  /// draw() with its random number given: `r` uniform in [0, n), where n
  /// counts this offer. Deterministic, for tests.
  std::optional<size_t> choose(uint64_t r);

  /// Outputs offered so far (draw or choose calls).
  uint64_t offered() const {
    return offered_;
  }

  /// Copies a call's inputs and the candidate's outputs, in ABI order, into
  /// `slot`, as the offer counted last.
  void keep(size_t slot, const void* const* inputs, const void* const* outputs);

  /// Calls kept so far.
  size_t kept() const;

  /// Runs `reference` (unlocking `code` around the call) on every kept
  /// call's inputs and compares the candidate's outputs with it at the
  /// outputs' tolerances. Returns why one failed, or "".
  std::string check(
    const problem& p, void* reference, const code_lock& code) const;

private:
  struct kept_call {
    /// Which offer it was, from 1.
    uint64_t offer = 0;
    std::vector<std::vector<std::byte>> inputs;
    std::vector<std::vector<std::byte>> outputs;
  };

  std::vector<size_t> input_bytes_;
  std::vector<size_t> output_bytes_;
  std::vector<kept_call> slots_;
  uint64_t offered_ = 0;
};

/// Slots for a sample of `wanted` calls whose sets take `set_bytes` each:
/// as many as fit in `budget` bytes, at most `wanted`, at least 1 (0 when
/// `wanted` is 0).
size_t sample_slots(size_t wanted, uint64_t set_bytes, uint64_t budget);

} // namespace eat::devices
