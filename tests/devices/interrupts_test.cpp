// Specification of the count of interrupts on the device's core
// (devices/runner/interrupts.hpp): the device interrupts routed to one
// core and their per-CPU counts, the share of the baseline's calls that is
// watched, the rule that rejects interrupts aimed at the baseline's calls,
// a workload's tally, and the count an evaluation reports in its method.

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>

#include <sched.h>

#include <catch2/catch.hpp>

#include "devices/runner/interrupts.hpp"
#include "tests/devices/fake_irqs.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// CPU `core`'s count of interrupt `irq` in /proc/interrupts' `text`, or
/// -1.
int64_t proc_count(const std::string& text, int irq, int32_t core) {
  std::istringstream in{text};
  std::string line;
  std::getline(in, line);
  std::istringstream header{line};
  int column = -1;
  std::string word;
  for (int i = 0; header >> word; ++i)
    if (word == "CPU" + std::to_string(core))
      column = i;
  auto label = std::to_string(irq) + ":";
  while (column >= 0 && std::getline(in, line)) {
    std::istringstream fields{line};
    if (!(fields >> word) || word != label)
      continue;
    int64_t n = -1;
    for (int i = 0; i <= column; ++i)
      if (!(fields >> n))
        return -1;
    return n;
  }
  return -1;
}

} // namespace

TEST_CASE("a CPU list holds the cores of its numbers and ranges") {
  for (int32_t core : {0, 2, 3, 8, 10, 11})
    CHECK(cpu_list_has("0-3,8,10-11\n", core));
  for (int32_t core : {4, 9, 12})
    CHECK_FALSE(cpu_list_has("0-3,8,10-11\n", core));
  CHECK_FALSE(cpu_list_has("", 0));
  CHECK_FALSE(cpu_list_has("x-y", 0));
}

TEST_CASE("a per-CPU count file gives each possible CPU's count in turn") {
  CHECK(per_cpu_count_of("0,4590038\n", 0) == 0);
  CHECK(per_cpu_count_of("0,4590038\n", 1) == 4590038);
  CHECK(per_cpu_count_of("0,4590038\n", 2) == -1);
  CHECK(per_cpu_count_of("7", 0) == 7);
  CHECK(per_cpu_count_of("", 0) == -1);
  CHECK(per_cpu_count_of("1,x,3", 1) == -1);
  // More digits than a count can have.
  CHECK(per_cpu_count_of("1234567890123456789,1", 0) == -1);
}

TEST_CASE("a counter sums the interrupts routed to its core and reads them "
          "anew each time") {
  fake_irqs irqs;
  irqs.route(36, "1", "0,100");
  irqs.route(38, "0-1", "5,7", "1");
  irqs.route(40, "0", "9,9");
  // Its effective affinity is what counts.
  irqs.route(42, "0-1", "1,1000", "0");
  auto counter = irqs.counter(1);
  REQUIRE(counter.is_open());
  CHECK(counter.sources() == std::vector<int>{36, 38});
  CHECK(counter.read_ns() > 0);
  CHECK(counter.read() == 107);
  irqs.count(36, "0,150");
  CHECK(counter.read() == 157);
}

TEST_CASE("a core that no device's interrupt is routed to counts none") {
  fake_irqs irqs;
  irqs.route(36, "0", "3,0");
  auto counter = irqs.counter(1);
  REQUIRE(counter.is_open());
  CHECK(counter.sources().empty());
  CHECK(counter.read() == 0);
}

TEST_CASE("interrupts routed to the core after the counter opened are "
          "read as others until a refresh counts them") {
  fake_irqs irqs;
  irqs.route(36, "1", "0,100");
  irqs.route(40, "0", "9,9");
  irqs.route(42, "0-1", "0,5", "0");
  irqs.route(44, "0", "x");
  auto counter = irqs.counter(1);
  REQUIRE(counter.is_open());
  CHECK(counter.sources() == std::vector<int>{36});
  // 44's count cannot be read: left out.
  CHECK(counter.read_others() == 14);
  CHECK_FALSE(counter.refresh());
  // irqbalance moves 40 to CPU 1: its count there grows, which read
  // does not see.
  irqs.route(40, "1", "9,30");
  CHECK(counter.read() == 100);
  CHECK(counter.read_others() == 35);
  CHECK(counter.refresh());
  CHECK(counter.sources() == std::vector<int>{36, 40});
  CHECK(counter.read() == 130);
  CHECK(counter.read_others() == 5);
  CHECK_FALSE(counter.refresh());
  // Moved off again, 36 is no longer read.
  irqs.route(36, "0", "0,100");
  CHECK(counter.refresh());
  CHECK(counter.sources() == std::vector<int>{40});
  CHECK(counter.read() == 30);
  CHECK(counter.read_others() == 105);
}

TEST_CASE("interrupts that appear after the counter opened are read as "
          "others until a refresh lists them, and those that go are dropped") {
  fake_irqs irqs;
  irqs.route(36, "1", "0,100");
  irqs.route(40, "0", "9,2");
  auto counter = irqs.counter(1);
  REQUIRE(counter.is_open());
  CHECK(counter.read_others() == 2);
  // A device is plugged in and its interrupt routed to CPU 1.
  irqs.route(50, "1", "0,7");
  CHECK(counter.read() == 100);
  CHECK(counter.read_others() == 9);
  CHECK(counter.refresh());
  CHECK(counter.sources() == std::vector<int>{36, 50});
  CHECK(counter.read() == 107);
  CHECK(counter.read_others() == 2);
  CHECK_FALSE(counter.refresh());
  // One that appears routed elsewhere is listed, and counted as before.
  irqs.route(52, "0", "4,1");
  CHECK(counter.read_others() == 3);
  CHECK(counter.refresh());
  CHECK(counter.sources() == std::vector<int>{36, 50});
  CHECK(counter.read_others() == 3);
  CHECK_FALSE(counter.refresh());
  // The device goes: its interrupt is read no more.
  irqs.remove(50);
  CHECK(counter.refresh());
  CHECK(counter.sources() == std::vector<int>{36});
  CHECK(counter.read() == 100);
  CHECK(counter.read_others() == 3);
  CHECK_FALSE(counter.refresh());
}

TEST_CASE("a counter that cannot list the interrupts or find its core's "
          "count says why") {
  auto missing = interrupt_counter::of_core(0, "/nonexistent/irq", "/proc/irq");
  CHECK_FALSE(missing.is_open());
  CHECK(contains(missing.why_not(), "cannot list /nonexistent/irq"));
  CHECK(missing.read() == -1);
  fake_irqs irqs;
  irqs.route(36, "0-7", "1,2");
  auto beyond = irqs.counter(5);
  CHECK_FALSE(beyond.is_open());
  CHECK(contains(beyond.why_not(), "no count for CPU 5"));
}

TEST_CASE("this machine's counter agrees with /proc/interrupts on the "
          "interrupts routed to a core") {
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof(allowed), &allowed) == 0);
  bool compared = false;
  for (int32_t core = 0; core < CPU_SETSIZE; ++core) {
    if (!CPU_ISSET(core, &allowed))
      continue;
    auto counter = interrupt_counter::of_core(core);
    INFO("CPU " << core << ": " << counter.why_not());
    REQUIRE(counter.is_open());
    // Read between two readings of the counter, which only grow.
    auto before = counter.read();
    std::ifstream in{"/proc/interrupts"};
    std::string text{std::istreambuf_iterator<char>{in}, {}};
    auto after = counter.read();
    int64_t sum = 0;
    for (int n : counter.sources()) {
      auto c = proc_count(text, n, core);
      INFO("interrupt " << n);
      REQUIRE(c >= 0);
      sum += c;
    }
    CHECK(before <= sum);
    CHECK(sum <= after);
    compared = compared || !counter.sources().empty();
  }
  if (!compared)
    WARN("no device's interrupt is routed to a core this process may use");
}

TEST_CASE("the baseline's calls are all watched unless two reads cost more "
          "than a tenth of a call") {
  CHECK(watched_fraction(1'000'000, 30'000) == 1);
  CHECK(watched_fraction(600'000, 30'000) == 1);
  CHECK(watched_fraction(300'000, 30'000) == Approx(0.5));
  CHECK(watched_fraction(3'000, 30'000) == Approx(0.005));
  CHECK(watched_fraction(1'000, 0) == 1);
}

TEST_CASE("the tail bound is Chernoff's and vanishes at or below the mean") {
  CHECK(log_tail_bound(100, 25, 0.25) == 0);
  CHECK(log_tail_bound(100, 10, 0.25) == 0);
  CHECK(log_tail_bound(0, 0, 0.25) == 0);
  // All n above a chance of p: p^n.
  CHECK(log_tail_bound(10, 10, 0.25) == Approx(10 * std::log(0.25)));
  auto a = 0.8;
  auto kl = a * std::log(a / 0.25) + (1 - a) * std::log((1 - a) / 0.75);
  CHECK(log_tail_bound(100, 80, 0.25) == Approx(-100 * kl));
}

TEST_CASE("the rate a count allows is bounded where its lower tail falls to "
          "one in 10^10") {
  // No interrupt at all: exp(-m) = 10^-10.
  CHECK(poisson_upper_bound(0) == Approx(std::log(1e10)).epsilon(1e-6));
  for (int64_t c : {1, 10, 100, 10'000}) {
    auto m = poisson_upper_bound(c);
    auto c_ = static_cast<double>(c);
    CHECK(-m + c_ + c_ * std::log(m / c_) == Approx(std::log(1e-10)));
    CHECK(m > c_ + 3 * std::sqrt(c_));
  }
}

TEST_CASE("three in four Poisson counts are at most its three-quarter "
          "mark") {
  CHECK(poisson_three_quarters(0) == 0);
  CHECK(poisson_three_quarters(0.2) == 0); // P(0) = 0.82
  CHECK(poisson_three_quarters(1) == 2);   // P(<= 1) = 0.74, P(<= 2) = 0.92
  CHECK(poisson_three_quarters(3) == 4);   // P(<= 3) = 0.65, P(<= 4) = 0.82
  auto big = poisson_three_quarters(10'000);
  CHECK(big >= 10'060);
  CHECK(big <= 10'075);
}

namespace {

/// A tally of `rounds` watched rounds from counts drawn at `rate` an ms
/// (a fixed seed), with baseline calls of `baseline_ms` and candidate
/// calls of `candidate_ms`; `aim(i)` interrupts more in the baseline's
/// call of round i.
template<class Aim>
interrupt_tally tally_of(int rounds, double rate, double baseline_ms,
  double candidate_ms, Aim aim, int64_t between = 0) {
  watched_irq irq;
  REQUIRE(irq.is_open());
  auto& watch = irq.watch;
  std::mt19937_64 gen{42};
  std::poisson_distribution<int64_t> in_baseline{rate * baseline_ms};
  std::poisson_distribution<int64_t> in_candidate{rate * candidate_ms};
  int64_t all = between;
  int64_t ns = 0;
  auto ms = [](double x) {
    return static_cast<int64_t>(x * 1e6);
  };
  for (int i = 0; i < rounds; ++i) {
    auto b = in_baseline(gen) + aim(i);
    auto c = in_candidate(gen);
    watch.add(
      static_cast<size_t>(i), {b, ms(baseline_ms)}, {c, ms(candidate_ms)});
    all += b + c;
    ns += ms(baseline_ms + candidate_ms) * 2;
  }
  irq.count(all);
  return watch.finish(ns);
}

} // namespace

TEST_CASE("interrupts at one rate in both kernels' calls are not aimed") {
  auto none = [](int) {
    return 0;
  };
  for (double rate : {0.0, 0.05, 2.0, 30.0}) {
    CAPTURE(rate);
    // A candidate ten times faster, the same kernel, one ten times slower.
    for (double candidate_ms : {0.1, 1.0, 10.0}) {
      CAPTURE(candidate_ms);
      auto t = tally_of(2'000, rate, 1.0, candidate_ms, none);
      CHECK(aimed_interrupts_text(t, 1).empty());
    }
  }
  CHECK(aimed_interrupts_text({}, 1).empty());
}

TEST_CASE("interrupts crowded into the baseline's calls are aimed at them") {
  // The red team's attack: about 8 in each of the baseline's calls of
  // 1.3 ms, and a little background in both.
  auto t = tally_of(300, 0.2, 1.3, 0.1, [](int) {
    return 8;
  });
  auto why = aimed_interrupts_text(t, 1);
  CAPTURE(why);
  CHECK(contains(why, "interrupts aimed at the baseline's calls: "));
  CHECK(contains(why, "on the device's core (CPU 1, device interrupts) in "
                      "390.0 ms of the baseline's timed calls and "));
  CHECK(contains(why, "in 30.0 ms of the candidate's, over 300 watched "
                      "rounds: "));
  CHECK(contains(why, "300 of the 300 watched calls of the baseline's had "
                      "more than three in four such calls would"));
  CHECK(contains(why, "smp_affinity"));
  CHECK(t.baseline_above == 300);
}

TEST_CASE("interrupts put between the calls as well as in the baseline's "
          "are aimed all the same") {
  // As many per ms between the calls as in the baseline's: only the
  // candidate's calls are spared, and they are what the baseline's are
  // compared with.
  auto t = tally_of(
    300, 0.2, 1.3, 0.1,
    [](int) {
      return 8;
    },
    5'000);
  CHECK(t.all > 7'000);
  CHECK_FALSE(aimed_interrupts_text(t, 1).empty());
}

TEST_CASE("a burst of interrupts in a few of the baseline's calls is not "
          "aimed") {
  // Three bursts of 300 in 2000 rounds of the same kernel twice.
  auto t = tally_of(2'000, 0.5, 1.0, 1.0, [](int i) {
    return i == 10 || i == 500 || i == 1500 ? 300 : 0;
  });
  CHECK(t.baseline > t.candidate + 800);
  CHECK(aimed_interrupts_text(t, 1).empty());
}

TEST_CASE("an excess too small to move the samples or one that chance "
          "could give is not aimed") {
  // Every other baseline call meets one more: more than the candidate's
  // rate, but hardly a call far above what that rate allows.
  auto half = tally_of(2'000, 0.1, 1.0, 0.1, [](int i) {
    return i % 2;
  });
  CHECK(aimed_interrupts_text(half, 1).empty());
  // {rounds, baseline, its ns, candidate, its ns, bound, above, all, ns}
  // All 6 calls above their mark: a chance of (1/4)^6. All 20: (1/4)^20.
  CHECK(aimed_interrupts_text(
    {6, 48, 6'000'000, 0, 600'000, 38.0, 6, 48, 7'000'000}, 1)
          .empty());
  CHECK_FALSE(aimed_interrupts_text(
    {20, 160, 20'000'000, 0, 2'000'000, 11.5, 20, 160, 23'000'000}, 1)
                .empty());
  // 20 above, but a count of no more than the candidate's rate gives:
  // 10 in the baseline's 20 ms where the candidate had 1 in 2 ms.
  CHECK(aimed_interrupts_text(
    {20, 10, 20'000'000, 1, 2'000'000, 11.5, 20, 11, 23'000'000}, 1)
          .empty());
}

TEST_CASE("a workload's tally holds the watched rounds and the whole "
          "timing") {
  fake_irqs irqs;
  irqs.route(36, "0", "100");
  auto counter = irqs.counter(0);
  REQUIRE(counter.is_open());
  interrupt_watch watch{&counter};
  watch.start(1'000);
  CHECK(watch.counting());
  watch.add(0, {1, 200}, {1, 2'000});
  watch.add(1, {-1, 500}, {2, 50}); // a failed read: the round is left out
  watch.add(2, {40, 300}, {0, 3'000});
  irqs.count(36, "150");
  auto t = watch.finish(20'000);
  CHECK(t.rounds == 2);
  CHECK(t.baseline == 41);
  CHECK(t.baseline_ns == 500);
  CHECK(t.candidate == 1);
  CHECK(t.candidate_ns == 5'000);
  CHECK(t.all == 50);
  CHECK(t.all_ns == 19'000);
  // One interrupt in 5000 ns: the bound is poisson_upper_bound(1) in it,
  // with the margin.
  CHECK(t.rate_bound_per_ms
        == Approx(rate_margin * poisson_upper_bound(1) / 5'000 * 1e6));
  // At that rate 200 ns and 300 ns expect about 1.6 and 2.5, whose marks
  // are 2 and 3: 1 is below its mark, 40 above.
  CHECK(t.baseline_above == 1);
}

TEST_CASE("a workload's tally counts apart the interrupts of those routed "
          "to the core during its timing") {
  fake_irqs irqs;
  irqs.route(36, "0", "100,0");
  irqs.route(40, "1", "0,50");
  auto counter = irqs.counter(0);
  REQUIRE(counter.is_open());
  interrupt_watch watch{&counter};
  watch.start(0);
  irqs.route(40, "0", "12,50");
  irqs.count(36, "110,0");
  auto t = watch.finish(1'000);
  CHECK(t.all == 10);
  CHECK(t.unwatched == 12);
}

TEST_CASE("interrupts routed to the core during a timing matter from one "
          "round in two") {
  interrupt_tally t;
  CHECK_FALSE(routed_during_timing(t, 10));
  t.unwatched = 4;
  CHECK_FALSE(routed_during_timing(t, 10));
  t.unwatched = 5;
  CHECK(routed_during_timing(t, 10));
  CHECK(routed_during_timing(t, 0));
}

namespace {

/// A passed workload of 10 watched rounds whose calls met no counted
/// interrupt, during whose timing interrupt `irq` is routed to CPU 0 (if
/// it is not yet; made if it does not exist) and comes there `n` more
/// times, to `count` in all.
workload_report timed_while_routed(fake_irqs& irqs,
  const interrupt_counter& counter, int64_t& count, int64_t n,
  eval_status status = eval_status::passed, int irq = 40) {
  interrupt_watch watch{&counter};
  watch.start(0);
  workload_report r;
  r.status = status;
  for (size_t i = 0; i < 10; ++i) {
    watch.add(i, {0, 1'000, 1'000}, {0, 1'000, 1'000});
    r.baseline_ns.push_back(1'000);
    r.candidate_ns.push_back(1'000);
  }
  count += n;
  irqs.route(irq, "0", std::to_string(count) + ",0");
  r.interrupts = watch.finish(100'000);
  return r;
}

} // namespace

TEST_CASE("a workload is timed again, the interrupts counted, where ones "
          "routed to the core during its timing came in a round in two") {
  fake_irqs irqs;
  irqs.route(36, "0", "0,0");
  irqs.route(40, "1", "0,0");
  auto counter = irqs.counter(0);
  REQUIRE(counter.is_open());
  int64_t count = 0;
  std::vector<int> tries;
  // Runs a workload during each try of which `n` such interrupts come.
  auto timed = [&](int64_t n, eval_status status = eval_status::passed) {
    return run_with_routes(&counter, [&, n, status](int again) {
      tries.push_back(again);
      return timed_while_routed(irqs, counter, count, n, status);
    });
  };
  SECTION("moved during the first try: timed again with 40 counted") {
    auto r = timed(6);
    CHECK(tries == std::vector<int>{0, 1});
    CHECK(r.interrupts.retimed == 1);
    CHECK(r.interrupts.unwatched == 0);
    CHECK(r.interrupts.all == 6);
    CHECK(counter.sources() == std::vector<int>{36, 40});
  }
  SECTION("too few to move a median: timed once") {
    auto r = timed(4);
    CHECK(tries == std::vector<int>{0});
    CHECK(r.interrupts.retimed == 0);
    CHECK(r.interrupts.unwatched == 4);
  }
  SECTION("a workload that failed is not timed again") {
    auto r = timed(9, eval_status::incorrect);
    CHECK(tries == std::vector<int>{0});
    CHECK(r.interrupts.unwatched == 9);
  }
  SECTION("an interrupt that appears during the first try: timed again "
          "with it counted") {
    auto r = run_with_routes(&counter, [&](int again) {
      tries.push_back(again);
      return timed_while_routed(
        irqs, counter, count, 6, eval_status::passed, 50);
    });
    CHECK(tries == std::vector<int>{0, 1});
    CHECK(r.interrupts.retimed == 1);
    CHECK(r.interrupts.unwatched == 0);
    CHECK(r.interrupts.all == 6);
    CHECK(counter.sources() == std::vector<int>{36, 50});
  }
  SECTION("routed before the workload: the refresh counts them at once") {
    irqs.route(40, "0", "0,0");
    auto r = timed(6);
    CHECK(tries == std::vector<int>{0});
    CHECK(r.interrupts.all == 6);
    CHECK(r.interrupts.unwatched == 0);
  }
  SECTION("without a counter: timed once") {
    auto r = run_with_routes(nullptr, [&](int again) {
      tries.push_back(again);
      workload_report w;
      w.status = eval_status::passed;
      w.interrupts.unwatched = 100;
      return w;
    });
    CHECK(tries == std::vector<int>{0});
  }
}

TEST_CASE("without a counter a workload's tally is empty") {
  interrupt_watch none{nullptr};
  none.start(0);
  CHECK_FALSE(none.counting());
  none.add(0, {5, 100}, {1, 10});
  auto t = none.finish(1'000);
  CHECK(t.rounds == 0);
  CHECK(t.all_ns == 0);
  // A counter whose file went away counts nothing either.
  fake_irqs irqs;
  irqs.route(36, "0", "1");
  auto counter = irqs.counter(0);
  REQUIRE(counter.is_open());
  interrupt_watch lost{&counter};
  irqs.count(36, "gone");
  lost.start(0);
  CHECK_FALSE(lost.counting());
}

TEST_CASE("an evaluation counts the interrupts around the baseline's calls "
          "and says so in its method") {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  // Calls of about a millisecond: every one is watched.
  auto task = sgemm_task({gemm_workload(128, 128, 128)});
  std::regex figures{"counted around both kernels' calls in every round or "
                     "a secret share, and rejected when the baseline's "
                     "calls have far more than the candidate's rate allows: "
                     "([0-9]+) in the "
                     "baseline's calls \\(([0-9.e+-]+) ms\\), ([0-9]+) in "
                     "the candidate's \\(([0-9.e+-]+) ms\\) over ([0-9]+) "
                     "rounds, ([0-9]+) in all ([0-9.e+-]+) ms of timing"};
  for (bool processes : {false, true}) {
    DYNAMIC_SECTION(
      (processes ? "in kernel processes" : "in the runner's process")) {
      opts.kernel_processes = processes;
      auto r = make_device(opts)->evaluate(
        task, make_candidate("c", task.baseline_source), 3);
      INFO(r.detail);
      REQUIRE(r.status == eval_status::passed);
      INFO(r.method);
      std::smatch m;
      REQUIRE(std::regex_search(r.method, m, figures));
      CHECK(std::stoll(m[5]) > 0);
      CHECK(std::stoll(m[1]) + std::stoll(m[3]) <= std::stoll(m[6]));
      CHECK(std::stod(m[2]) > 0);
      CHECK(std::stod(m[4]) > 0);
      CHECK(std::stod(m[7]) > std::stod(m[2]) + std::stod(m[4]));
      // Which interrupts were counted.
      CHECK(std::regex_search(r.method,
        std::regex{"device interrupts on the device's core \\(([0-9]+(, "
                   "[0-9]+)*|none is routed there)\\) counted"}));
    }
  }
}
