// Taking the time of the interrupts on the device's core off the samples
// (docs/harness.md, "The interrupts' time taken off").
//
// Under an even load of interrupts both kernels' calls meet them at one
// rate, but their medians do not: a call much shorter than the gap
// between two interrupts is seldom met, so the candidate's median stays
// clean, while every one of the baseline's long calls is met. Red team
// round 7 measured speedups 4 - 7 % higher under plain disk reads from the
// other core. After the last round the harness measures what one interrupt
// costs on the device's core, and takes that off each watched call of both
// kernels for the interrupts counted around it (interrupts.hpp), scaled
// from the count's window to the sample.
//
// The cost is measured by a probe, not fitted to the kernels' calls: a
// call that is longer for any other reason (the VM's host slowing the
// core for a while) also meets more interrupts, and a slope of the
// baseline's samples over their counts took that for the interrupts' cost
// (once 158 us an interrupt, which took 97 % off a workload's samples).
// The probe spins on the core in chunks of one length, so that nothing but
// chance sets how many interrupts a chunk meets, and reads in each chunk
// the time its clock skipped. It sees what a handler takes, not what it
// leaves in the caches of a kernel (which errs against the candidate where
// that matters, in short, cache-tuned calls).
//
// What a candidate's call gets taken off is capped at rate_margin times the
// baseline's rate of interrupts over its sample: interrupts aimed at the
// candidate's calls bring it no more than that. What is left to an
// attacker who can aim two kinds of interrupt, dear ones at the baseline's
// calls and cheap ones at the candidate's, is the difference between the
// probe's cost and the cheap ones' at that rate.

#pragma once

#include <cstdint>
#include <vector>

namespace eat::devices {

class interrupt_counter;

/// One watched call: the interrupts counted around it and the wall time
/// between the two reads (interrupt_watch), and its sample (the call's
/// time less other tasks').
struct counted_call {
  int64_t count = 0;
  int64_t window_ns = 0;
  int64_t sample_ns = 0;
};

/// One chunk of the probe: the interrupts counted around it, the wall time
/// between the two reads and of the spin itself, the time the spin's
/// clock skipped (gaps of more than probe_gap_ns between two reads), and
/// its longest gap.
struct probe_chunk {
  int64_t count = 0;
  int64_t window_ns = 0;
  int64_t spin_ns = 0;
  int64_t gaps_ns = 0;
  int64_t longest_ns = 0;
};

/// A gap between two reads of the clock longer than this is time the spin
/// did not run (a read takes some 30 ns).
constexpr int64_t probe_gap_ns = 1'000;

/// A chunk with a gap longer than this is left out: the host took the
/// core, and interrupts piled up meanwhile.
constexpr int64_t probe_stall_ns = 500'000;

/// Spins `spin_ns` on the calling thread, reading the steady clock, with
/// `counter` read just before and after.
probe_chunk probe_once(const interrupt_counter& counter, int64_t spin_ns);

/// Probes in chunks of `spin_ns` until `interrupts` have been counted or
/// `budget_ns` of wall time is spent.
std::vector<probe_chunk> probe_interrupts(const interrupt_counter& counter,
  int64_t spin_ns, int64_t interrupts, int64_t budget_ns);

/// What one interrupt costs the code it interrupts, in ns, from the
/// probe's `chunks`: the chunks (less those with a stall) are gathered by
/// count into bins of at least 5 (neighbouring counts share a bin where
/// they have fewer); each pair of bins gives the slope between their
/// median gap times, weighted by the product of their sizes; the weighted
/// median of those slopes (Theil-Sen over bins) is the cost, at most the
/// median longest gap of the chunks that met an interrupt (each skipped
/// the clock at least that long at once). A count also holds the
/// interrupts in the reads around the spin, which skip no clock of it:
/// their share of a chunk's window (~18 of 218 us here) is all the
/// medians can lose of the cost. 0 when there are fewer than two bins, or
/// below 0.
double interrupt_cost_ns(const std::vector<probe_chunk>& chunks);

/// The time `cost_ns` an interrupt gives `call`'s sample: its count scaled
/// from its window to its sample, and at most `cap_per_ns` interrupts for
/// each ns of sample where that is not negative; never more than the
/// sample less 1 ns.
int64_t interrupts_time_ns(
  const counted_call& call, double cost_ns, double cap_per_ns = -1);

} // namespace eat::devices
