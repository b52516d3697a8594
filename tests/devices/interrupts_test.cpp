// Specification of the count of interrupts on the device's core
// (devices/runner/interrupts.hpp): reading /proc/interrupts for one core,
// the share of the baseline's calls that is watched, the rule that
// rejects interrupts aimed at the baseline's calls, a workload's tally,
// and the count an evaluation reports in its method.

#include <atomic>
#include <cmath>
#include <fstream>
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
  auto before = counter.read();
  constexpr int sent = 2000;
  for (int i = 0; i < sent; ++i)
    ::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  auto after = counter.read();
  stop = true;
  spinner.join();
  ::sched_setaffinity(0, sizeof(allowed), &allowed);
  INFO("CPU " << target << ": " << before << " then " << after);
  // Each reached the spinner while it had its core (other tests may share
  // it): at least a tenth.
  CHECK(after - before >= sent / 10);
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
  CHECK(log_tail_bound(100, 50, 0.5) == 0);
  CHECK(log_tail_bound(100, 10, 0.5) == 0);
  CHECK(log_tail_bound(0, 0, 0.5) == 0);
  // All n in a share p: p^n.
  CHECK(log_tail_bound(10, 10, 0.5) == Approx(10 * std::log(0.5)));
  auto a = 0.8;
  auto kl = a * std::log(a / 0.5) + (1 - a) * std::log((1 - a) / 0.5);
  CHECK(log_tail_bound(100, 80, 0.5) == Approx(-100 * kl));
}

TEST_CASE("interrupts that fall at the baseline's share of the two kernels' "
          "time are not aimed") {
  // {rounds, baseline, its ns, candidate, its ns, all, all ns}
  // Half the time, half the interrupts, and a few more by chance.
  interrupt_tally t{
    1'000, 5'200, 500'000'000, 4'800, 500'000'000, 12'000, 1'500'000'000};
  CHECK(aimed_interrupts_text(t, 1).empty());
  // None at all, or none counted.
  CHECK(aimed_interrupts_text(
    {1'000, 0, 500'000'000, 0, 500'000'000, 0, 1'000'000'000}, 1)
          .empty());
  CHECK(aimed_interrupts_text({}, 1).empty());
}

TEST_CASE("interrupts crowded into the baseline's calls are aimed at them") {
  // The red team's attack: the disk's completions in the baseline's
  // calls, hardly any in the candidate's.
  interrupt_tally t{
    1'000, 30'000, 800'000'000, 50, 50'000'000, 30'400, 1'500'000'000};
  auto why = aimed_interrupts_text(t, 1);
  CAPTURE(why);
  CHECK(contains(why, "interrupts aimed at the baseline's calls: 30000 on "
                      "the device's core (CPU 1"));
  CHECK(contains(why, "in 800.0 ms of the baseline's timed calls and 50 in "
                      "50.0 ms of the candidate's, over 1000 watched rounds"));
  CHECK(contains(why, "would have had about 28282"));
  CHECK(contains(why, "smp_affinity"));
}

TEST_CASE("interrupts put between the calls as well as in the baseline's "
          "are aimed all the same") {
  // As many per ms between the calls as in the baseline's: only the
  // candidate's calls are spared, and they are what the baseline's are
  // compared with.
  interrupt_tally t{
    1'000, 8'000, 800'000'000, 10, 50'000'000, 15'000, 1'500'000'000};
  CHECK_FALSE(aimed_interrupts_text(t, 1).empty());
}

TEST_CASE("a share that chance could give or an excess too small to move "
          "the samples is not aimed") {
  // 8 of 10 in half the time, over 4 rounds: about 0.05.
  CHECK(
    aimed_interrupts_text({4, 8, 50'000'000, 2, 50'000'000, 10, 100'000'000}, 1)
      .empty());
  // 510 000 of 1 000 000 in half the time: certainly more than their
  // share, but 10 000 more over 100 000 rounds, one in ten.
  CHECK(aimed_interrupts_text({100'000, 510'000, 500'000'000, 490'000,
                                500'000'000, 1'000'000, 1'000'000'000},
    1)
          .empty());
  // The same excess over 1000 rounds is aimed.
  CHECK_FALSE(aimed_interrupts_text({1'000, 510'000, 500'000'000, 490'000,
                                      500'000'000, 1'000'000, 1'000'000'000},
    1)
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
  watch.add(3, 200, 1, 20);
  watch.add(-1, 500, 2, 50); // a failed read: the round is left out
  watch.add(4, 300, 0, 30);
  write_file(path, one_cpu(120));
  auto t = watch.finish(2'000);
  CHECK(t.rounds == 2);
  CHECK(t.baseline == 7);
  CHECK(t.baseline_ns == 500);
  CHECK(t.candidate == 1);
  CHECK(t.candidate_ns == 50);
  CHECK(t.all == 20);
  CHECK(t.all_ns == 1'000);
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
                     "a secret share, and rejected when the baseline's are "
                     "far above their share by time: ([0-9]+) in the "
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
