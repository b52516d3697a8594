// Specification of the count of interrupts on the device's core
// (devices/runner/interrupts.hpp): reading /proc/interrupts for one core,
// the share of the baseline's calls that is watched, the rule that
// rejects interrupts aimed at the baseline's calls, a workload's tally,
// and the count an evaluation reports in its method.

#include <atomic>
#include <cmath>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <thread>

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/interrupts.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// /proc/interrupts of a machine whose CPU 1 is offline: its columns are
/// CPU0, CPU2 and CPU3.
constexpr const char* three_cpus
  = "           CPU0       CPU2       CPU3       \n"
    "  1:          9          0          0  IO-APIC   1-edge      i8042\n"
    " 36:          0    2808816         40  PCI-MSIX-0000:00:02.0   "
    "1-edge      virtio1-req.0\n"
    " 42:          7          5          3  PCI-MSIX  tx\n"
    "NMI:          0          0          0   Non-maskable interrupts\n"
    "LOC:    7793275    8806427    1234567   Local timer interrupts\n"
    "CAL:    2280643     145432         11   Function call interrupts\n"
    "ERR:          0\n"
    "MIS:          4\n";

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out{path, std::ios::trunc};
  out << text;
}

/// A file in the format of /proc/interrupts whose CPU 0 has had `n`.
std::string one_cpu(int64_t n) {
  return "           CPU0\n 36:  " + std::to_string(n)
         + "  PCI-MSIX  disk\nLOC:  99999  Local timer interrupts\n";
}

} // namespace

TEST_CASE("the count of a core is its column summed over every source but "
          "the local timer") {
  CHECK(parse_interrupts(three_cpus, 0) == 9 + 0 + 7 + 0 + 2280643);
  CHECK(parse_interrupts(three_cpus, 2) == 2808816 + 5 + 145432);
  CHECK(parse_interrupts(three_cpus, 3) == 40 + 3 + 11);
}

TEST_CASE("a core without a column has no count") {
  CHECK(parse_interrupts(three_cpus, 1) == -1);
  CHECK(parse_interrupts(three_cpus, 4) == -1);
  CHECK(parse_interrupts("", 0) == -1);
  CHECK(parse_interrupts("garbage\n 1: 2 3\n", 0) == -1);
}

TEST_CASE("a line whose count is not a number of at most 18 digits counts "
          "nothing") {
  CHECK(parse_interrupts("  CPU0  CPU1\n 1: 5 x7 dev\n 2: 1 2 dev\n", 1) == 2);
  CHECK(parse_interrupts("  CPU0\n 1: 1234567890123456789 dev\n 2: 3 dev\n", 0)
        == 3);
}

TEST_CASE("a counter for a missing file or a core the file does not list "
          "says why it cannot count") {
  auto dir = make_temp_dir();
  auto missing = interrupt_counter::of_core(0, (dir.path() / "none").string());
  CHECK_FALSE(missing.is_open());
  CHECK(contains(missing.why_not(), "cannot open"));
  CHECK(missing.read() == -1);
  auto path = (dir.path() / "interrupts").string();
  write_file(path, three_cpus);
  auto offline = interrupt_counter::of_core(1, path);
  CHECK_FALSE(offline.is_open());
  CHECK(contains(offline.why_not(), "no count for CPU 1"));
}

TEST_CASE("a counter reads the file anew each time") {
  auto dir = make_temp_dir();
  auto path = (dir.path() / "interrupts").string();
  write_file(path, one_cpu(10));
  auto counter = interrupt_counter::of_core(0, path);
  REQUIRE(counter.is_open());
  CHECK(counter.read_ns() > 0);
  CHECK(counter.read() == 10);
  write_file(path, one_cpu(12345));
  CHECK(counter.read() == 12345);
}

TEST_CASE("this machine's counter counts the interrupts sent to a core") {
  // membarrier's private expedited command interrupts every other core
  // that runs a thread of this process: here one spinning on `target`.
  auto cores = std::thread::hardware_concurrency();
  if (cores < 2
      || ::syscall(
           SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0)
           != 0) {
    WARN("needs two cores and membarrier's private expedited command");
    return;
  }
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof(allowed), &allowed) == 0);
  int here = -1;
  int target = -1;
  for (int c = 0; c < CPU_SETSIZE && target < 0; ++c)
    if (CPU_ISSET(c, &allowed))
      (here < 0 ? here : target) = c;
  if (target < 0) {
    WARN("this process may run on one core only");
    return;
  }
  auto counter = interrupt_counter::of_core(target);
  REQUIRE(counter.is_open());
  std::atomic<bool> spinning{false};
  std::atomic<bool> stop{false};
  std::thread spinner{[&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(target, &one);
    ::sched_setaffinity(0, sizeof(one), &one);
    spinning = true;
    while (!stop)
      ;
  }};
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(here, &one);
  ::sched_setaffinity(0, sizeof(one), &one);
  while (!spinning)
    ;
  // Each reaches the spinner only while it has its core, which other
  // tests may share: send until 200 came, or 10^6 were sent.
  auto before = counter.read();
  auto after = before;
  int sent = 0;
  while (after - before < 200 && sent < 1'000'000) {
    for (int i = 0; i < 1000; ++i, ++sent)
      ::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    after = counter.read();
  }
  stop = true;
  spinner.join();
  ::sched_setaffinity(0, sizeof(allowed), &allowed);
  INFO("CPU " << target << ": " << before << " then " << after << " after "
              << sent << " sent");
  CHECK(after - before >= 200);
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
  auto dir = make_temp_dir();
  auto path = (dir.path() / "interrupts").string();
  write_file(path, one_cpu(0));
  auto counter = interrupt_counter::of_core(0, path);
  REQUIRE(counter.is_open());
  interrupt_watch watch{&counter};
  watch.start(0);
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
    watch.add(b, ms(baseline_ms), c, ms(candidate_ms));
    all += b + c;
    ns += ms(baseline_ms + candidate_ms) * 2;
  }
  write_file(path, one_cpu(all));
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
  CHECK(contains(why, "on the device's core (CPU 1, its timer's left out) in "
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
  auto dir = make_temp_dir();
  auto path = (dir.path() / "interrupts").string();
  write_file(path, one_cpu(100));
  auto counter = interrupt_counter::of_core(0, path);
  REQUIRE(counter.is_open());
  interrupt_watch watch{&counter};
  watch.start(1'000);
  CHECK(watch.counting());
  watch.add(1, 200, 1, 2'000);
  watch.add(-1, 500, 2, 50); // a failed read: the round is left out
  watch.add(40, 300, 0, 3'000);
  write_file(path, one_cpu(150));
  auto t = watch.finish(20'000);
  CHECK(t.rounds == 2);
  CHECK(t.baseline == 41);
  CHECK(t.baseline_ns == 500);
  CHECK(t.candidate == 1);
  CHECK(t.candidate_ns == 5'000);
  CHECK(t.all == 50);
  CHECK(t.all_ns == 19'000);
  // One interrupt in 5000 ns: the bound is poisson_upper_bound(1) in it.
  CHECK(t.rate_bound_per_ms == Approx(poisson_upper_bound(1) / 5'000 * 1e6));
  // At that rate 200 ns and 300 ns expect about 1.1 and 1.6, whose marks
  // are 2: 1 is below its mark, 40 above.
  CHECK(t.baseline_above == 1);
}

TEST_CASE("without a counter a workload's tally is empty") {
  interrupt_watch none{nullptr};
  none.start(0);
  CHECK_FALSE(none.counting());
  none.add(5, 100, 1, 10);
  auto t = none.finish(1'000);
  CHECK(t.rounds == 0);
  CHECK(t.all_ns == 0);
  // A counter whose file went away counts nothing either.
  auto dir = make_temp_dir();
  auto path = (dir.path() / "interrupts").string();
  write_file(path, one_cpu(1));
  auto counter = interrupt_counter::of_core(0, path);
  REQUIRE(counter.is_open());
  interrupt_watch lost{&counter};
  write_file(path, "gone\n");
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
    }
  }
}
