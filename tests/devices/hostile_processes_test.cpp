// The hostile-candidate suite's process cases (BENCHMARK-PROTOCOL.md
// section 4; the rest is in hostile_candidates_test.cpp): a fork bomb, and a
// process that escapes the runner's process group with setsid and a double
// fork. Each must be rejected, and none of the kernel's processes may
// outlive its evaluation (the runner's PID namespace, docs/harness.md,
// "Sandbox").

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// Includes and a helper for the kernels below: write_host_pid(fd)
/// appends the caller's pid as this test sees it (/proc is the host's, so
/// /proc/self names the host pid even inside the runner's PID namespace).
const std::string pid_helper = R"(#include <fcntl.h>
#include <string>
#include <unistd.h>
static void write_host_pid(int fd) {
  char buf[32];
  ssize_t n = ::readlink("/proc/self", buf, sizeof(buf) - 1);
  if (n > 0) {
    buf[n++] = '\n';
    (void) ::write(fd, buf, static_cast<size_t>(n));
  }
}
)";

/// Code that opens `pid_file` for appending as `fd`.
std::string open_pid_file(const std::string& pid_file) {
  return "int fd = ::open(\"" + pid_file
         + "\", O_WRONLY | O_CREAT | O_APPEND, 0600);\n";
}

/// A kernel that forks 50 children on its first call; each child appends
/// its pid to `pid_file` and sleeps until killed (or until SIGALRM after
/// 60 s, so a harness that fails to kill them fails this test instead of
/// leaking processes for ever).
std::string fork_bomb(const std::string& pid_file) {
  return naive_kernel("static bool done = false;\n"
                      "if (!done) {\n"
                      "  done = true;\n  "
                        + open_pid_file(pid_file)
                        + "  for (int i = 0; i < 50; ++i) {\n"
                          "    pid_t pid = ::fork();\n"
                          "    if (pid == 0) {\n"
                          "      write_host_pid(fd);\n"
                          "      ::alarm(60);\n"
                          "      for (;;) ::pause();\n"
                          "    }\n"
                          "    if (pid < 0) break;\n"
                          "  }\n"
                          "  ::close(fd);\n"
                          "}",
    "", pid_helper);
}

/// A kernel whose first call starts a process that escapes: a child that
/// leaves the process group with setsid(), forks a grandchild and exits,
/// reaped at once, so the kernel has no child left; the grandchild appends
/// its pid to `pid_file` before the call returns and sleeps (at most 60 s).
std::string escaping_process(const std::string& pid_file) {
  return naive_kernel("static bool done = false;\n"
                      "if (!done) {\n"
                      "  done = true;\n  "
                        + open_pid_file(pid_file)
                        + "  int ready[2];\n"
                          "  (void) ::pipe(ready);\n"
                          "  pid_t pid = ::fork();\n"
                          "  if (pid == 0) {\n"
                          "    ::setsid();\n"
                          "    if (::fork() == 0) {\n"
                          "      write_host_pid(fd);\n"
                          "      (void) ::write(ready[1], \"x\", 1);\n"
                          "      ::alarm(60);\n"
                          "      for (;;) ::pause();\n"
                          "    }\n"
                          "    ::_exit(0);\n"
                          "  }\n"
                          "  char x;\n"
                          "  (void) ::read(ready[0], &x, 1);\n"
                          "  ::waitpid(pid, nullptr, 0);\n"
                          "  ::close(fd);\n"
                          "}",
    "", pid_helper + "#include <sys/wait.h>\n");
}

/// A kernel that, on every call in the runner's PID namespace, starts a
/// helper with CLONE_PARENT: a sibling that the namespace's init reaps, not
/// the kernel, so no process check sees it and the runner's getrusage never
/// counts it (the evaluation's cgroup does, and so does init, which
/// publishes what it reaped). The call returns once the helper has worked
/// and been reaped.
std::string helper_reaped_by_init() {
  return naive_kernel(
    "if (::getppid() == 1) {\n"
    "  auto pid = static_cast<pid_t>(::syscall(SYS_clone,\n"
    "    CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, nullptr));\n"
    "  if (pid == 0) {\n"
    "    for (volatile int x = 0; x < 2000000; x = x + 1) {}\n"
    "    ::_exit(0);\n"
    "  }\n"
    "  while (pid > 0 && ::kill(pid, 0) == 0)\n"
    "    ::sched_yield();\n"
    "}",
    "",
    "#include <csignal>\n#include <sched.h>\n#include <sys/syscall.h>\n"
    "#include <unistd.h>\n");
}

std::vector<pid_t> read_pids(const std::filesystem::path& file) {
  std::ifstream in{file};
  std::vector<pid_t> pids;
  for (pid_t pid = 0; in >> pid;)
    pids.push_back(pid);
  return pids;
}

/// Checks that process `pid`, started by a kernel, is dead: reaped by the
/// runner's PID namespace (gone by the time the evaluation returned), or,
/// where the runner has none, an orphan of this subreaper killed by
/// SIGKILL.
void check_killed(pid_t pid) {
  INFO("process " << pid);
  int status = 0;
  pid_t got = -1;
  while ((got = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR)
    ; // retry
  if (got < 0) {
    CHECK(errno == ECHILD);
    CHECK(process_gone(pid));
    return;
  }
  REQUIRE(got == pid);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

} // namespace

TEST_CASE("a fork bomb is rejected, its children die with the evaluation, "
          "and the device keeps working") {
  auto dir = make_temp_dir();
  auto pid_file = kernel_writable_file(dir, "pids");
  // Without a PID namespace, orphans of the runner become this process's
  // children, so the test can wait for each one and see how it died.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  auto dev = make_device(fast_options(dir));
  auto task = sgemm_task({gemm_workload(8, 8, 8)});
  auto bomb = dev->evaluate(
    task, make_candidate("bomb", fork_bomb(pid_file.string())), 1);
  INFO(bomb.detail);
  CHECK(bomb.status == eval_status::rejected);
  CHECK(contains(bomb.detail, "child processes"));
  auto pids = read_pids(pid_file);
  CHECK(!pids.empty());
  // Root escapes RLIMIT_NPROC; the runner's pids cgroup, where it can make
  // one, caps the bomb at the limits' 16 extra tasks even so.
  if (contains(bomb.method, "tasks capped by a pids cgroup"))
    CHECK(pids.size() <= 16);
  else
    WARN("no pids cgroup: " << bomb.method);
  for (auto pid : pids)
    check_killed(pid);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  auto next = dev->evaluate(
    task, make_candidate("good", tiled_source("ikj", 8, 8, 8)), 2);
  INFO(next.detail);
  CHECK(next.status == eval_status::passed);
}

TEST_CASE("a kernel's child process cannot leave the runner's process "
          "group") {
  // Fails its output unless its child's setsid() and setpgid() fail.
  auto kernel = naive_kernel("static bool tried = false;\n"
                             "bool left = false;\n"
                             "if (!tried) {\n"
                             "  tried = true;\n"
                             "  pid_t pid = ::fork();\n"
                             "  if (pid == 0)\n"
                             "    ::_exit(::setsid() == -1 && errno == EPERM\n"
                             "            && ::setpgid(0, 0) == -1 ? 0 : 1);\n"
                             "  int status = -1;\n"
                             "  ::waitpid(pid, &status, 0);\n"
                             "  left = status != 0;\n"
                             "}",
    "if (left) c[0] = NAN;",
    "#include <cerrno>\n#include <cmath>\n#include <sys/wait.h>\n"
    "#include <unistd.h>\n");
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto result = dev->evaluate(
    sgemm_task({gemm_workload(8, 8, 8)}), make_candidate("leaves", kernel), 1);
  INFO(result.detail);
  CHECK(result.status == eval_status::passed);
}

TEST_CASE("a kernel's process that escapes with setsid and a double fork is "
          "rejected and dies with the evaluation") {
  auto dir = make_temp_dir();
  auto pid_file = kernel_writable_file(dir, "pids");
  auto dev = make_device(fast_options(dir));
  auto result = dev->evaluate(sgemm_task({gemm_workload(8, 8, 8)}),
    make_candidate("escape", escaping_process(pid_file.string())), 1);
  INFO(result.detail << "; " << result.method);
  auto pids = read_pids(pid_file);
  REQUIRE(pids.size() == 1);
  if (!contains(result.method, "kernel processes in their own PID namespace")) {
    // Unprivileged (no CLONE_NEWPID): the runner adopted the orphan
    // (devices/runner/orphans.hpp), saw it and ended it.
    WARN("no PID namespace for the runner here: " << result.method);
    CHECK(::geteuid() != 0);
  }
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail, "child processes"));
  CHECK(process_gone(pids[0]));
}

TEST_CASE("a kernel whose helper process is reaped by the namespace's init, "
          "not by the kernel, is rejected as hidden work, with or without a "
          "CPU-time cgroup") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto result = dev->evaluate(sgemm_task({gemm_workload(8, 8, 8)}),
    make_candidate("sibling", helper_reaped_by_init()), 1);
  INFO(result.detail << "; " << result.method);
  if (!contains(result.method, "kernel processes in their own PID namespace")) {
    // No namespace (no user namespaces either): the kernel starts no helper.
    WARN("no PID namespace here: " << result.method);
    CHECK(::geteuid() != 0);
    return;
  }
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail, "hidden threads: other threads or child "
                                "processes used "));
}

TEST_CASE("a kernel that uses up its file descriptors cannot blind the "
          "hidden-work check that reads the evaluation's cgroup") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto result = dev->evaluate(sgemm_task({gemm_workload(8, 8, 8)}),
    make_candidate("no_fds",
      naive_kernel("static bool done = false;\n"
                   "if (!done) {\n"
                   "  done = true;\n"
                   "  while (::open(\"/dev/null\", O_RDONLY) >= 0) {}\n"
                   "}",
        "", "#include <fcntl.h>\n")),
    1);
  INFO(result.detail << "; " << result.method);
  if (!contains(result.method, "hidden work counted over the evaluation's "
                               "cgroup")) {
    // getrusage needs no descriptor: nothing to blind.
    WARN("no CPU-time cgroup here: " << result.method);
    CHECK(::geteuid() != 0);
    return;
  }
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail, "hidden threads: cannot read the "
                                "evaluation's CPU time from "));
  CHECK(contains(result.detail, "Too many open files"));
}
