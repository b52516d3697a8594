// Specification of the time other tasks take from a timed call
// (devices/runner/run_delay.hpp): the schedstat readings, the arithmetic
// that leaves a kernel's own threads out, a thread that shares its core
// with a spinning process, and an evaluation whose device core another
// process spins on, in the runner's process and in kernel processes.

#include <csignal>
#include <ctime>
#include <regex>
#include <string>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/cpu_device.hpp"
#include "devices/runner/checks.hpp"
#include "devices/runner/run_delay.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

int64_t monotonic_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

/// A process pinned to `core` that spins until killed, or with `bursts`
/// sleeps 300 us and spins 300 us in turn (a waking task takes the core
/// from one that was running: a kernel in a process of its own, which
/// sleeps between its calls, gets ahead of a task that never sleeps);
/// returned once it has started (it says so over a pipe).
pid_t start_spinner(int core, bool bursts = false) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    ::sched_setaffinity(0, sizeof(set), &set);
    ::alarm(120); // should the test die first
    char one = 1;
    (void)!::write(ready[1], &one, 1);
    for (;;) {
      if (bursts) {
        timespec nap{0, 300'000};
        ::nanosleep(&nap, nullptr);
      }
      for (auto end = monotonic_ns() + 300'000; monotonic_ns() < end;)
        ; // spin
    }
  }
  ::close(ready[1]);
  char one = 0;
  REQUIRE(::read(ready[0], &one, 1) == 1);
  ::close(ready[0]);
  return pid;
}

void stop(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

/// The figures the method gives for the time taken off, in ms: baseline's
/// and candidate's; {-1, -1} when it gives none.
std::pair<double, double> taken_off_ms(const std::string& method) {
  static const std::regex figures{"taken off the sample: ([0-9.e+-]+) ms "
                                  "of the baseline's calls, ([0-9.e+-]+) ms "
                                  "of the candidate's"};
  std::smatch m;
  if (!std::regex_search(method, m, figures))
    return {-1, -1};
  return {std::stod(m[1]), std::stod(m[2])};
}

} // namespace

TEST_CASE("a schedstat's text gives the time run and the time waited") {
  auto r = parse_schedstat("2297353 366083 2\n");
  CHECK(r.ran_ns == 2297353);
  CHECK(r.waited_ns == 366083);
  for (const char* bad : {"", "12", "x 1 2", "-5 3 1"}) {
    INFO(bad);
    CHECK(parse_schedstat(bad).waited_ns == -1);
  }
}

TEST_CASE("the time taken off is the wait less what the kernel's own "
          "threads ran and is never below 0") {
  sched_reading before{1'000, 100};
  sched_reading after{5'000, 1'100};
  CHECK(others_time_ns(before, after, 0) == 1'000);
  CHECK(others_time_ns(before, after, 300) == 700);
  CHECK(others_time_ns(before, after, 2'000) == 0);
  // Unreadable readings take nothing off.
  CHECK(others_time_ns({}, after, 0) == 0);
  CHECK(others_time_ns(before, {}, 0) == 0);
}

TEST_CASE("a thread that shares its core with a spinning process waits for "
          "it and its schedstat says so") {
  auto own = schedstat_file::of_this_thread();
  REQUIRE(own.why_not() == "");
  REQUIRE(own.is_open());
  auto core = ::sched_getcpu();
  REQUIRE(core >= 0);
  pinned_thread pin{{core}};
  REQUIRE(pin.error() == "");
  auto spinner = start_spinner(core);
  auto child = schedstat_file::of_child(spinner);
  auto child_before = child.read();
  auto before = own.read();
  spin_for_cpu(200'000'000);
  auto after = own.read();
  auto child_after = child.read();
  stop(spinner);
  REQUIRE(child.why_not() == "");
  // The spinner had the core about half the time: this thread waited
  // about as long as it ran.
  CHECK(after.waited_ns - before.waited_ns > 50'000'000);
  CHECK(child_after.ran_ns - child_before.ran_ns > 50'000'000);
  CHECK(others_time_ns(before, after, 0) > 50'000'000);
}

TEST_CASE("a process that does not exist has no schedstat to read") {
  auto none = schedstat_file::of_child(999'999'999);
  CHECK_FALSE(none.is_open());
  CHECK(contains(none.why_not(), "pidfd_open"));
}

TEST_CASE("the time another process spinning in bursts on the device's "
          "core had it is taken off both kernels' samples") {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.timing.min_time_s = 0.2;
  opts.timing.max_time_s = 1;
  auto core = resolve_core(opts.core);
  REQUIRE(core);
  // Calls of ~10 ms, longer than a scheduler slice: under EEVDF a kernel
  // that wakes for a call of ~1.5 ms may run it through to its end while
  // the spinner waits, and a CI run once saw nothing taken off in kernel
  // processes (every call at its quiet time); a longer call is preempted
  // for the waiting spinner at a tick once its slice is spent.
  auto task = sgemm_task({gemm_workload(224, 224, 224)});
  for (bool processes : {false, true}) {
    DYNAMIC_SECTION(
      (processes ? "in kernel processes" : "in the runner's process")) {
      opts.kernel_processes = processes;
      auto dev = make_device(opts);
      auto spinner = start_spinner(*core, true);
      auto r
        = dev->evaluate(task, make_candidate("c", task.baseline_source), 3);
      stop(spinner);
      INFO(r.detail);
      REQUIRE(r.status == eval_status::passed);
      INFO(r.method);
      auto [baseline, candidate] = taken_off_ms(r.method);
      CHECK(baseline > 1);
      CHECK(candidate > 1);
      // The same kernel twice: what was left is the kernel's own time.
      CHECK(r.geomean_speedup > 0.7);
      CHECK(r.geomean_speedup < 1.4);
    }
  }
}

TEST_CASE("with take_off_others off the method says the time other tasks "
          "had the core is left in") {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.timing.take_off_others = false;
  auto task = sgemm_task({gemm_workload(32, 32, 32)});
  auto r = make_device(opts)->evaluate(
    task, make_candidate("c", task.baseline_source), 3);
  REQUIRE(r.status == eval_status::passed);
  CHECK(contains(r.method, "the time other tasks had the core left in"));
  CHECK(taken_off_ms(r.method).first == -1);
}

TEST_CASE("a kernel whose calling thread yields to its own helper thread "
          "gets none of the helper's time taken off") {
  // In its own process the candidate's main thread waits for the core
  // while its helper computes the outputs: the wait is the kernel's own
  // work, and only other tasks' time may come off. Were it taken off,
  // the candidate's samples would be the thread's start-up alone.
  auto yields
    = naive_kernel("std::atomic<bool> done{false};\n  std::thread helper{[&] {",
      "    done.store(true, std::memory_order_release);\n  }};\n"
      "  while (!done.load(std::memory_order_acquire))\n"
      "    sched_yield();\n  helper.join();",
      "#include <atomic>\n#include <sched.h>\n#include <thread>\n");
  auto r = evaluate_rounds(yields, gemm_workload(96, 96, 96), 20);
  INFO(r.detail);
  REQUIRE(r.status == eval_status::passed);
  INFO(r.method);
  CHECK(taken_off_ms(r.method).second >= 0);
  CHECK(r.geomean_speedup < 1.3);
}
