// Specification of taking the interrupts' time off the samples
// (devices/runner/interrupt_cost.hpp): the probe that spins on the core
// and what one interrupt costs by its chunks; the time that gives each
// call; and the speedups it leaves under an even load of interrupts, and
// under interrupts aimed at the candidate's calls.

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/interrupt_cost.hpp"
#include "devices/runner/interrupts.hpp"
#include "devices/stats.hpp"
#include "tests/devices/fake_irqs.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// The reads of a count around a call, in us: its window is the sample
/// and this.
constexpr double reads_around_us = 20;

/// Kernels' calls under interrupts at one rate, each costing the call it
/// lands in a fixed time.
struct irq_model {
  double rate_per_us;
  double cost_us;
  std::mt19937_64 gen{7};

  /// A call of `us` (with a relative noise of `noise`): the interrupts
  /// that land in its sample cost it; those in the reads around it are
  /// counted too. `extra` more land in it at `extra_cost_us` each.
  counted_call call(
    double us, double noise, int64_t extra = 0, double extra_cost_us = 0) {
    std::normal_distribution<double> jitter{1.0, noise};
    auto inside
      = std::poisson_distribution<int64_t>{rate_per_us * us + 1e-12}(gen);
    auto outside = std::poisson_distribution<int64_t>{
      rate_per_us * reads_around_us + 1e-12}(gen);
    auto sample_us = us * jitter(gen) + cost_us * static_cast<double>(inside)
                     + extra_cost_us * static_cast<double>(extra);
    auto sample_ns = static_cast<int64_t>(sample_us * 1e3);
    return {inside + outside + extra,
      sample_ns + static_cast<int64_t>(reads_around_us * 1e3), sample_ns};
  }
};

/// A probe's chunk of 200 us under `m`, its reads taking 18 us: the
/// interrupts in the spin skip its clock by their cost, give or take a
/// fifth, the timer's tick (not counted) now and then by 3 us.
probe_chunk probe_chunk_under(irq_model& m) {
  auto inside
    = std::poisson_distribution<int64_t>{m.rate_per_us * 200 + 1e-12}(m.gen);
  auto outside
    = std::poisson_distribution<int64_t>{m.rate_per_us * 18 + 1e-12}(m.gen);
  auto ticks = std::bernoulli_distribution{0.05}(m.gen) ? 3'000 : 0;
  std::uniform_real_distribution<double> give_or_take{0.8, 1.2};
  int64_t gaps = ticks;
  int64_t longest = ticks;
  for (int64_t i = 0; i < inside; ++i) {
    auto one = static_cast<int64_t>(m.cost_us * 1e3 * give_or_take(m.gen));
    gaps += one;
    longest = std::max(longest, one);
  }
  return {inside + outside, 218'000, 200'000, gaps, longest};
}

std::vector<probe_chunk> probe_under(irq_model& m, int chunks = 200) {
  std::vector<probe_chunk> all;
  for (int i = 0; i < chunks; ++i)
    all.push_back(probe_chunk_under(m));
  return all;
}

double sample_median(const std::vector<int64_t>& xs) {
  return median(std::vector<double>(xs.begin(), xs.end()));
}

/// The speedups of medians with the interrupts left in and taken off, the
/// tally, and the candidate's samples before and after.
struct irq_outcome {
  double left_in;
  double taken_off;
  interrupt_tally tally;
  std::vector<int64_t> candidate_before;
  std::vector<int64_t> candidate_after;
};

/// `rounds` rounds of a baseline of `baseline_us` and a candidate of
/// `candidate_us` under `m` (the interrupts counted by a watch); `aim`
/// more interrupts land in each of the candidate's calls, at
/// `aim_cost_us` each.
irq_outcome timed_under(irq_model m, double baseline_us, double candidate_us,
  int64_t aim = 0, double aim_cost_us = 0, int rounds = 3'000) {
  watched_irq irq;
  REQUIRE(irq.is_open());
  auto& watch = irq.watch;
  std::vector<int64_t> baseline_ns;
  std::vector<int64_t> candidate_ns;
  int64_t all = 0;
  int64_t ns = 0;
  for (int i = 0; i < rounds; ++i) {
    auto b = m.call(baseline_us, 0.003);
    auto c = m.call(candidate_us, 0.005, aim, aim_cost_us);
    baseline_ns.push_back(b.sample_ns);
    candidate_ns.push_back(c.sample_ns);
    watch.add(static_cast<size_t>(i), b, c);
    all += b.count + c.count;
    ns += b.window_ns + c.window_ns;
  }
  irq.count(all);
  auto tally = watch.finish(ns);
  irq_outcome o;
  o.left_in = sample_median(baseline_ns) / sample_median(candidate_ns);
  o.candidate_before = candidate_ns;
  tally.cost_ns = interrupt_cost_ns(probe_under(m));
  watch.take_off(tally, tally.cost_ns, baseline_ns, candidate_ns);
  o.taken_off = sample_median(baseline_ns) / sample_median(candidate_ns);
  o.tally = tally;
  o.candidate_after = candidate_ns;
  return o;
}

} // namespace

TEST_CASE("an interrupt's cost is how much more time a probe's chunks "
          "skip for each interrupt counted around them") {
  // {rate an us, cost in us}: a quiet core's few, disk reads, a flood.
  for (auto [rate, cost] : {std::pair{0.002, 8.0}, std::pair{0.004, 12.0},
         std::pair{0.004, 26.0}, std::pair{0.013, 5.0}}) {
    CAPTURE(rate, cost);
    irq_model m{rate, cost};
    // The counts include the reads around each chunk, where an interrupt
    // skips no clock of the spin; the medians hardly see them.
    CHECK(interrupt_cost_ns(probe_under(m)) == Approx(cost * 1e3).epsilon(0.1));
  }
}

TEST_CASE("chunks in which the host took the core are left out") {
  // One chunk in ten stalls for 2 ms, and the interrupts of that time
  // pile up in it: a slope through them would say ~500 us an interrupt.
  irq_model m{0.004, 12.0};
  auto chunks = probe_under(m);
  for (size_t i = 0; i < chunks.size(); i += 10) {
    chunks[i].count += std::poisson_distribution<int64_t>{0.004 * 2'000}(m.gen);
    chunks[i].gaps_ns += 2'000'000;
    chunks[i].window_ns += 2'000'000;
    chunks[i].longest_ns = 2'000'000;
  }
  CHECK(interrupt_cost_ns(chunks) == Approx(12e3).epsilon(0.1));
}

namespace {

/// Five chunks of 200 us in windows of 250 us that met `count` interrupts
/// and skipped `gaps` + 0, 1, 2, 3 and 50 ns.
std::vector<probe_chunk> five_chunks(int64_t count, int64_t gaps) {
  std::vector<probe_chunk> chunks;
  for (int64_t more : {0, 1, 2, 3, 50})
    chunks.push_back({count, 250'000, 200'000, gaps + more, gaps + more});
  return chunks;
}

std::vector<probe_chunk> joined(
  std::vector<probe_chunk> a, const std::vector<probe_chunk>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

} // namespace

TEST_CASE("no cost is measured without two counts to compare or from "
          "gaps that shrink as counts grow") {
  CHECK(interrupt_cost_ns(std::vector<probe_chunk>{}) == 0);
  // Every chunk met 3: nothing says what one costs.
  CHECK(interrupt_cost_ns(five_chunks(3, 30'000)) == 0);
  CHECK(
    interrupt_cost_ns(joined(five_chunks(0, 9'000), five_chunks(1, 0))) == 0);
  // Chunks whose count was not read are left out.
  CHECK(
    interrupt_cost_ns(joined(five_chunks(0, 0), five_chunks(-1, 50'000))) == 0);
  // Medians 2 and 20 002 ns, 2 interrupts apart.
  CHECK(interrupt_cost_ns(joined(five_chunks(0, 0), five_chunks(2, 20'000)))
        == Approx(10'000.0));
}

TEST_CASE("no interrupt costs more than the longest gaps of the chunks "
          "that met one") {
  // Chunks with 2 counted skipped 30 us more than those with none, in
  // gaps of at most 9 us: whatever else skipped their clocks, no one
  // interrupt held it for the slope's 15 us.
  std::vector<probe_chunk> chunks;
  for (int i = 0; i < 10; ++i) {
    chunks.push_back({0, 218'000, 200'000, 0, 0});
    chunks.push_back({2, 218'000, 200'000, 30'000, 9'000});
  }
  CHECK(interrupt_cost_ns(chunks) == 9'000);
}

TEST_CASE("a lone interrupt on a quiet core says nothing of its cost") {
  std::vector<probe_chunk> chunks(199, {0, 218'000, 200'000, 0, 0});
  chunks.push_back({1, 218'000, 200'000, 90'000, 90'000});
  CHECK(interrupt_cost_ns(chunks) == 0);
  // Five such chunks do.
  for (int i = 0; i < 4; ++i)
    chunks.push_back({1, 218'000, 200'000, 10'000, 10'000});
  CHECK(interrupt_cost_ns(chunks) > 0);
}

namespace {

/// SIGALRM's handler: spins 300 us, as an interrupt's handler would hold
/// the core.
void hold_the_core(int) {
  timespec t0{};
  ::clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1'000'000'000 + (t.tv_nsec - t0.tv_nsec)
        >= 300'000)
      return;
  }
}

} // namespace

TEST_CASE("a probe's chunk spins its length and sums the time its clock "
          "skipped") {
  fake_irqs irqs;
  irqs.route(36, "0", "7");
  auto counter = irqs.counter(0);
  REQUIRE(counter.is_open());
  struct sigaction held {};
  held.sa_handler = hold_the_core;
  struct sigaction before {};
  REQUIRE(::sigaction(SIGALRM, &held, &before) == 0);
  // A signal to this thread once it has run 2 ms (within the chunk of 20
  // ms however long it waited for the core before; CPU timers fire at the
  // next tick), whose handler holds the thread.
  sigevent to_me{};
  to_me.sigev_notify = SIGEV_THREAD_ID;
  to_me.sigev_signo = SIGALRM;
  to_me._sigev_un._tid = static_cast<pid_t>(::gettid());
  timer_t timer{};
  REQUIRE(::timer_create(CLOCK_THREAD_CPUTIME_ID, &to_me, &timer) == 0);
  itimerspec at{{0, 0}, {0, 2'000'000}};
  REQUIRE(::timer_settime(timer, 0, &at, nullptr) == 0);
  auto chunk = probe_once(counter, 20'000'000);
  ::timer_delete(timer);
  ::sigaction(SIGALRM, &before, nullptr);
  CHECK(chunk.count == 0);
  CHECK(chunk.spin_ns >= 20'000'000);
  CHECK(chunk.window_ns >= chunk.spin_ns);
  CHECK(chunk.gaps_ns >= 300'000);
  CHECK(chunk.longest_ns >= 300'000);
  CHECK(chunk.longest_ns <= chunk.gaps_ns);
  CHECK(chunk.gaps_ns < chunk.spin_ns);
}

TEST_CASE("a probe stops at its budget when too few interrupts come") {
  fake_irqs irqs;
  irqs.route(36, "0", "7");
  auto counter = irqs.counter(0);
  REQUIRE(counter.is_open());
  // Counts that never move: 5 ms of chunks of 200 us.
  auto chunks = probe_interrupts(counter, 200'000, 64, 5'000'000);
  int64_t spent = 0;
  for (const auto& c : chunks)
    spent += c.window_ns;
  CHECK(spent >= 4'800'000);
  CHECK(chunks.size() <= 26);
  CHECK(interrupt_cost_ns(chunks) == 0);
  // A counter that fails ends it.
  irqs.count(36, "gone");
  auto failed = probe_interrupts(counter, 200'000, 64, 5'000'000);
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].count == -1);
}

TEST_CASE("the probe runs only where one call in two of a kernel met an "
          "interrupt") {
  // Counts that never move: a probe that runs sees no cost, but spends
  // its budget (5 ms at least) and says so in the tally.
  auto tally_after = [](int64_t baseline, int64_t candidate) {
    watched_irq irq;
    REQUIRE(irq.is_open());
    for (size_t i = 0; i < 10; ++i)
      irq.watch.add(i, {i < static_cast<size_t>(baseline) ? 1 : 0, 1'000'000},
        {i < static_cast<size_t>(candidate) ? 1 : 0, 100'000});
    auto tally = irq.watch.finish(20'000'000);
    CHECK(irq.watch.probe_cost(tally) == 0);
    return tally;
  };
  // 4 of 10 and 4 of 10: neither median moved, no probe.
  auto quiet = tally_after(4, 4);
  CHECK(quiet.probe_ns == 0);
  CHECK(quiet.cost_ns == 0);
  // 5 of the baseline's 10, or 5 of the candidate's: a probe.
  for (auto [b, c] : {std::pair{5, 0}, std::pair{0, 5}}) {
    CAPTURE(b, c);
    auto met = tally_after(b, c);
    CHECK(met.probe_ns >= 4'800'000);
    CHECK(met.probe == 0);
  }
  // Without a counter there is nothing to probe with.
  interrupt_watch none{nullptr};
  auto empty = none.finish(1'000);
  CHECK(none.probe_cost(empty) == 0);
  CHECK(empty.probe_ns == 0);
}

TEST_CASE("the time interrupts give a call is its count scaled from its "
          "window to its sample, within a cap and the sample") {
  // 4 counted in a window of which the sample is 0.8: 3.2 inside.
  CHECK(interrupts_time_ns({4, 1'000, 800}, 100) == 320);
  // At most 0.001 an ns of sample: 0.8 inside.
  CHECK(interrupts_time_ns({4, 1'000, 800}, 100, 0.001) == 80);
  CHECK(interrupts_time_ns({4, 1'000, 800}, 100, 0.01) == 320);
  // Never the whole sample.
  CHECK(interrupts_time_ns({1'000, 1'000, 500}, 100) == 499);
  CHECK(interrupts_time_ns({0, 1'000, 800}, 100) == 0);
  CHECK(interrupts_time_ns({4, 1'000, 800}, 0) == 0);
  CHECK(interrupts_time_ns({-1, 1'000, 800}, 100) == 0);
}

TEST_CASE("under an even load of interrupts the speedup is what it is on "
          "a quiet core") {
  // 4 an ms at 10 us each: 4 % of every call.
  irq_model load{0.004, 10.0};
  SECTION("a candidate far shorter than the gap between interrupts") {
    // Its median is clean; the baseline's is 4 % slow.
    auto o = timed_under(load, 1'000, 30);
    CHECK(o.left_in > 1'000.0 / 30 * 1.03);
    CHECK(o.taken_off == Approx(1'000.0 / 30).epsilon(0.01));
    CHECK(o.tally.cost_ns == Approx(10e3).epsilon(0.1));
    CHECK(o.tally.baseline_taken_ns > 100 * o.tally.candidate_taken_ns);
  }
  SECTION("a candidate met by interrupts as well") {
    // Both medians are slow alike: nothing to mend, nothing broken.
    auto o = timed_under(load, 1'000, 500);
    CHECK(o.left_in == Approx(2.0).epsilon(0.01));
    CHECK(o.taken_off == Approx(2.0).epsilon(0.01));
  }
  SECTION("a quiet core") {
    auto o = timed_under({0, 10.0}, 1'000, 30);
    CHECK(o.taken_off == o.left_in);
    CHECK(o.tally.baseline_taken_ns == 0);
    CHECK(o.tally.candidate_taken_ns == 0);
  }
}

TEST_CASE("interrupts aimed at the candidate's calls are taken off no "
          "faster than the baseline's rate") {
  // Dear interrupts, 2 an ms at 20 us, everywhere; three cheap ones of
  // 1 us in each of the candidate's calls besides, credited at the dear
  // ones' cost were it not for the cap.
  irq_model load{0.002, 20.0};
  auto o = timed_under(load, 1'000, 50, 3, 1.0);
  REQUIRE(o.tally.cost_ns == Approx(20e3).epsilon(0.1));
  auto cap_per_ns = rate_margin * static_cast<double>(o.tally.baseline)
                    / static_cast<double>(o.tally.baseline_ns);
  // The most any call got taken off beyond the cap (1 ns of rounding).
  double beyond = -1e9;
  for (size_t i = 0; i < o.candidate_after.size(); ++i)
    beyond = std::max(
      beyond, static_cast<double>(o.candidate_before[i] - o.candidate_after[i])
                - cap_per_ns * static_cast<double>(o.candidate_before[i])
                    * o.tally.cost_ns);
  CHECK(beyond <= 1);
  // Credited at the dear cost, each call would lose 3 x 20 us of its
  // 53: a speedup near 100x. Capped, the candidate gains no more than the
  // cap's share of its sample.
  auto clean = 1'000.0 / 50;
  auto most = rate_margin * 0.002 * 20.0;
  CHECK(o.taken_off < clean * (1 + most));
}
