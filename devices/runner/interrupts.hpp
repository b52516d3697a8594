// Interrupts on the device's core during the timing (docs/harness.md,
// "Interrupts on the device's core").
//
// An interrupt is no task: what it takes from a timed call is not in any
// thread's schedstat (run_delay.hpp), so it stays in the sample. A device's
// interrupts go to the cores its affinity names, and a process anywhere can
// raise them: a red team's process on the other core kept O_DIRECT reads in
// flight while only the baseline's calls ran, and the disk's completions,
// about 26 us each, landed on the device's core (28.7 - 31.9x against
// 24.9 - 26.6x on a quiet machine).
//
// The harness counts the device interrupts on the device's core (each
// interrupt routed there, /proc/irq/<n>/effective_affinity_list, read from
// /sys/kernel/irq/<n>/per_cpu_count) around both kernels' timed calls, in
// every round or, where a count costs too much against the baseline's
// call, in a secret share of the rounds. (/proc/interrupts has them all,
// but a read took 32 us here, and under an even load of disk reads the
// candidate's short windows, which those reads filled, showed 10 - 40 %
// fewer interrupts an ms than the baseline's: a red team's plain
// `dd iflag=direct` had honest kernels rejected. It takes each
// interrupt's lock, interrupts off, as it formats the file: probably what
// held the completions back.) Interrupts that do not follow
// the calls come at one rate in both kernels' calls. The candidate's calls
// bound that rate from above; the baseline's calls that had more than three in
// four calls would have at the bound are counted, and so many of them that
// chance would not give it reject the evaluation (aimed_interrupts_text).
// The calls are compared with each other, not with the time between them,
// where an attacker could put interrupts too. Counting calls rather than
// interrupts, a burst that chance put in one call (a disk flushing, a
// packet train) weighs as one call; and a burst in the candidate's calls
// only raises the bound. What the interrupts counted take from the calls
// is then taken off their samples, at a cost a probe measures on the core
// (interrupt_cost.hpp, interrupt_watch::probe_cost and take_off).

#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "devices/runner/interrupt_cost.hpp"
#include "devices/runner_protocol.hpp"

namespace eat::devices {

/// The device interrupts routed to one core, each a per_cpu_count file
/// kept open: opened once, read many times (a few microseconds each).
class interrupt_counter {
public:
  interrupt_counter() = default;
  interrupt_counter(const interrupt_counter&) = delete;
  interrupt_counter& operator=(const interrupt_counter&) = delete;
  interrupt_counter(interrupt_counter&& other) noexcept;
  interrupt_counter& operator=(interrupt_counter&& other) noexcept;
  ~interrupt_counter();

  /// Counts CPU `core`'s device interrupts: each interrupt <n> listed in
  /// `sys_dir` (/sys/kernel/irq) whose affinity in `proc_dir` (/proc/irq:
  /// <n>/effective_affinity_list, else <n>/smp_affinity_list) holds the
  /// core, from `sys_dir`/<n>/per_cpu_count; measures what a read costs.
  /// Interrupts routed there later (irqbalance moves them every 10 s), and
  /// those that appear later (hotplug), are counted by read_others until
  /// `refresh` finds them.
  static interrupt_counter of_core(int32_t core,
    const std::string& sys_dir = "/sys/kernel/irq",
    const std::string& proc_dir = "/proc/irq");

  bool is_open() const {
    return open_;
  }

  /// Why it is not open ("" when it is).
  const std::string& why_not() const {
    return why_not_;
  }

  int32_t core() const {
    return core_;
  }

  /// The median time one read took when opened, in ns.
  int64_t read_ns() const {
    return read_ns_;
  }

  /// The interrupts counted, e.g. {36, 38} (none: no device's interrupt
  /// goes to the core).
  const std::vector<int>& sources() const {
    return sources_;
  }

  /// The core's device interrupts so far; -1 when a file could not be
  /// read.
  int64_t read() const;

  /// The core's count so far of the other interrupts, those listed now
  /// but not read by `read` (not routed there when the counter opened or
  /// last refreshed, or listed since): read file by file (a few us each),
  /// so only around a whole timing. -1 when the counter is not open;
  /// interrupts whose files cannot be read are left out.
  int64_t read_others() const;

  /// Lists the interrupts again (those that appeared or went since) and
  /// reads their affinities, and counts those routed to the core now,
  /// measuring a read anew; whether the list or the routes changed. Keeps
  /// what it had where an interrupt's files cannot be opened. Allocates
  /// nothing where nothing changed, as read and read_others never do.
  bool refresh();

private:
  /// Whether `read` counts interrupt `n`.
  bool reads(int n) const;

  /// The median of five reads, in ns; -1 where one failed.
  int64_t measured_read_ns() const;

  bool open_ = false;
  std::vector<int> fds_;
  std::vector<int> sources_; // in order, as all_
  std::vector<int> all_; // those listed when opened or last refreshed
  std::string sys_dir_;
  std::string proc_dir_;
  int32_t core_ = -1;
  int64_t read_ns_ = 0;
  std::string why_not_;
};

/// Whether CPU `core` is in `list` ("0-3,8,10-11\n", as the affinity
/// files write it).
bool cpu_list_has(std::string_view list, int32_t core);

/// The `core`-th of the comma-separated counts of `text` (a per_cpu_count
/// file: one for each possible CPU); -1 when there is none.
int64_t per_cpu_count_of(std::string_view text, int32_t core);

/// The share of the rounds to count interrupts in, when the baseline's
/// calls take about `call_ns` and a read `read_ns`: all of them while two
/// reads cost at most a tenth of such a call, fewer in proportion below.
double watched_fraction(int64_t call_ns, int64_t read_ns);

/// How far above the candidate's rate the baseline's may be by no aim. A
/// disk read whose completion must be handled before the next is sent
/// can come more slowly while the core is busy in the kernel, as in the
/// harness's own work around a call, which fills the candidate's short
/// windows more than the baseline's. Under such loads the two rates
/// were within 10 % with these counts (10 - 40 % apart with
/// /proc/interrupts').
constexpr double rate_margin = 1.5;

/// The probe of an interrupt's cost (interrupt_cost.hpp): chunks of 200
/// us, until 128 interrupts are counted.
constexpr int64_t probe_chunk_ns = 200'000;
constexpr int64_t probe_interrupt_count = 128;

/// An upper bound on the log of the chance that a Binomial(n, p) count
/// reaches k (Chernoff: -n x KL(k/n || p)); 0 when k <= n p.
double log_tail_bound(double n, double k, double p);

/// The largest mean of a Poisson count that gives at most `count` with a
/// chance of 10^-10 or more (Chernoff's bound on the lower tail): where
/// `count` interrupts came, no rate above mean / time is credible.
double poisson_upper_bound(int64_t count);

/// The least q with P(X <= q) >= 3/4 for a Poisson X of mean `mean`.
int64_t poisson_three_quarters(double mean);

/// Why the interrupts of `t`, counted on CPU `core`, look aimed at the
/// baseline's calls, or "": when the baseline's calls had at least a
/// quarter of an interrupt each more than they would at the rate of the
/// candidate's, and more of them were above their three-quarter mark at
/// the candidate's bound than one in four by a margin that chance gives
/// less than once in 10^9.
std::string aimed_interrupts_text(const interrupt_tally& t, int32_t core);

/// One workload's count: `start` before the first timed round, `add`
/// for each watched round, `finish` after the last round.
class interrupt_watch {
public:
  /// Counts nothing with a null or closed counter.
  explicit interrupt_watch(const interrupt_counter* counter)
    : counter_(counter != nullptr && counter->is_open() ? counter : nullptr) {}

  /// Whether there is a counter to read.
  bool counting() const {
    return counter_ != nullptr && start_ >= 0;
  }

  /// The counter, or null.
  const interrupt_counter* counter() const {
    return counter_;
  }

  void start(int64_t now_ns);

  /// Watched round `round` (the index of its samples): each kernel's
  /// call, with its count (-1: not read; the round is then left out).
  void add(
    size_t round, const counted_call& baseline, const counted_call& candidate);

  /// The tally, with the whole timing ending at `now_ns`: the
  /// candidate's bound times rate_margin, the baseline's calls above
  /// their mark at it, and the interrupts on the core of those not
  /// routed there at the start (read_others).
  interrupt_tally finish(int64_t now_ns);

  /// What one interrupt costs on the core, measured by a probe
  /// (interrupt_cost.hpp) and recorded in `tally` (finish's): 0, and no
  /// probe, where fewer than one of each kernel's calls in two met an
  /// interrupt. The probe spins until probe_interrupt_count have been
  /// counted or a fiftieth of the timing (5 - 40 ms) is spent.
  double probe_cost(interrupt_tally& tally) const;

  /// Takes `cost_ns` for each interrupt counted off the watched rounds'
  /// samples (interrupts_time_ns), and records it in `tally`: the
  /// candidate's calls at most rate_margin times the baseline's rate.
  void take_off(interrupt_tally& tally, double cost_ns,
    std::vector<int64_t>& baseline_ns,
    std::vector<int64_t>& candidate_ns) const;

private:
  struct round_calls {
    size_t round;
    counted_call baseline;
    counted_call candidate;
  };
  const interrupt_counter* counter_;
  int64_t start_ = -1;
  int64_t others_start_ = -1;
  int64_t start_ns_ = 0;
  interrupt_tally tally_;
  std::vector<round_calls> rounds_;
};

/// Whether interrupts routed to the core during a workload's timing, and
/// so counted around none of its calls (`t.unwatched`), came often enough
/// to move the median of `rounds` samples: in one round in two or more.
bool routed_during_timing(const interrupt_tally& t, size_t rounds);

/// Runs `run` (one workload's checks and timing; its argument is the try,
/// 0 or 1) once `counter` (null: none) has read the affinities again. Where
/// a passed report's tally shows interrupts routed to the core during the
/// timing (routed_during_timing), it reads them once more and runs `run`
/// again with those interrupts counted: that report, with `retimed` 1 in
/// its tally.
workload_report run_with_routes(
  interrupt_counter* counter, const std::function<workload_report(int)>& run);

} // namespace eat::devices
