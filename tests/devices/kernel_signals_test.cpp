// Specification of what a kernel in a process of its own can do to other
// processes with signals, and with its output (`[devices.cpu]
// kernel_processes`, docs/harness.md "Kernel processes"): no descriptor of
// its signals another process (a red-team candidate stopped the baseline's
// process through one during each of the baseline's timed calls: 4.66x for
// the baseline's own softmax), a kernel's process that stops is reported at
// once, and its output is capped. The end-to-end cases evaluate a candidate
// through the built eat-runner.

#include <csignal>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/kernel_host.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// Evaluates `source` in kernel processes on a fresh device, on
/// sgemm_task's small workloads.
eval_result evaluate_in_processes(
  const std::string& source, double eval_timeout_s = 60) {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.kernel_processes = true;
  opts.eval_timeout_s = eval_timeout_s;
  auto dev = make_device(opts);
  return dev->evaluate(sgemm_task(), make_candidate("c", source), 11);
}

/// Waits until the child `pid` has reached the state `flag` (WSTOPPED,
/// WCONTINUED) without taking the report, which stays for stop_seen.
void await_state(pid_t pid, int flag) {
  siginfo_t info{};
  REQUIRE(::waitid(P_PID, static_cast<id_t>(pid), &info, flag | WNOWAIT) == 0);
}

} // namespace

TEST_CASE("a candidate cannot make a pipe signal the runner: a descriptor's "
          "signals go to no other process") {
  // Its first call owns a pipe's signals on behalf of its parent, the
  // runner, sets them to SIGKILL and writes to the pipe: the runner died
  // ("killed by SIGKILL; stderr: " and whatever the candidate printed).
  auto kills = naive_kernel(R"(static bool tried = false;
  if (!tried) {
    tried = true;
    int p[2];
    if (pipe(p) == 0 && fcntl(p[0], F_SETOWN, getppid()) == 0
        && fcntl(p[0], F_SETSIG, SIGKILL) == 0
        && fcntl(p[0], F_SETFL, O_ASYNC) == 0)
      (void)!write(p[1], "x", 1);
  })",
    "", "#include <csignal>\n#include <fcntl.h>\n#include <unistd.h>\n");
  auto result = evaluate_in_processes(kills);
  INFO(result.detail);
  CHECK(result.status == eval_status::passed);
}

TEST_CASE("a candidate whose process stops is a runtime error at once, not "
          "a timeout") {
  auto stops = naive_kernel("raise(SIGSTOP);", "", "#include <csignal>\n");
  auto result = evaluate_in_processes(stops, 30);
  INFO(result.detail);
  CHECK(result.status == eval_status::runtime_error);
  CHECK(
    contains(result.detail, "the candidate's process was stopped by SIGSTOP"));
}

TEST_CASE("a candidate that writes more than 1 MiB of output is killed for "
          "it") {
  // Dirty pages of its stderr.txt, written back while the baseline's calls
  // are timed, would be work of the system's that no check counts.
  auto writes = naive_kernel(R"(static char line[4096];
  for (int i = 0; i < 512; ++i)
    (void)!write(2, line, sizeof(line));)",
    "", "#include <unistd.h>\n");
  auto result = evaluate_in_processes(writes);
  INFO(result.detail);
  CHECK(result.status == eval_status::runtime_error);
  CHECK(contains(result.detail, "the candidate's process killed by SIGXFSZ"));
}

TEST_CASE("the runner sees a kernel's process stopped, and stopped and "
          "continued, once each") {
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0)
    for (;;)
      ::pause();
  CHECK(stop_seen(child).empty());
  REQUIRE(::kill(child, SIGSTOP) == 0);
  await_state(child, WSTOPPED);
  CHECK(stop_seen(child) == "was stopped by SIGSTOP");
  CHECK(stop_seen(child).empty());
  // Stopped and continued before the runner looks, as the red-team
  // candidate did to the baseline's process: one report.
  REQUIRE(::kill(child, SIGCONT) == 0);
  await_state(child, WCONTINUED);
  REQUIRE(::kill(child, SIGSTOP) == 0);
  await_state(child, WSTOPPED);
  REQUIRE(::kill(child, SIGCONT) == 0);
  await_state(child, WCONTINUED);
  CHECK(stop_seen(child) == "was stopped and continued by a signal");
  CHECK(stop_seen(child).empty());
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
}
