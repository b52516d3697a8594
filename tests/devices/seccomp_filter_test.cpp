// Specification of the seccomp filter under which kernel code runs
// (devices/runner/seccomp_filter.hpp). Each case forks a child that
// confines itself as the runner's worker does and then tries what it
// describes; the child reports the first expectation that did not hold
// through a pipe, and the parent checks that none was reported.

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>

#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/sockios.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/seccomp_filter.hpp"

using namespace eat::devices;

namespace {

/// Exit status of a child in which every expectation held.
constexpr int all_held = 42;

/// Where a confined child reports the expectation that did not hold.
int report_fd = -1;

/// In a confined child: ends it, reporting `what` (and errno), unless
/// `held`.
void expect(bool held, const std::string& what) {
  if (held)
    return;
  auto text = what + " (errno: " + std::strerror(errno) + ")";
  (void)::write(report_fd, text.data(), text.size());
  ::_exit(1);
}

/// Whether a system call's `result` is a failure with `error`.
bool failed_with(long result, int error) {
  return result == -1 && errno == error;
}

/// Forks a child that confines itself with `confine` and then runs
/// `body`; returns what the child reported, or how it ended otherwise, or
/// "" when every expectation held.
template<class Body>
std::string run_confined(
  Body body, std::string (*confine)() = confine_kernel_process) {
  int report[2];
  REQUIRE(::pipe2(report, O_CLOEXEC) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(report[0]);
    report_fd = report[1];
    auto why = confine();
    errno = 0;
    expect(why.empty(), "confining: " + why);
    body();
    ::_exit(all_held);
  }
  ::close(report[1]);
  std::string reported;
  char buf[256];
  ssize_t n;
  while ((n = ::read(report[0], buf, sizeof(buf))) != 0)
    if (n > 0)
      reported.append(buf, static_cast<size_t>(n));
    else if (errno != EINTR)
      break;
  ::close(report[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR)
    ; // retry
  if (!reported.empty())
    return reported;
  if (WIFSIGNALED(status))
    return "the child was killed by signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != all_held)
    return "the child exited with " + std::to_string(WEXITSTATUS(status));
  return {};
}

/// Set by on_signal.
volatile sig_atomic_t signalled = 0;

void on_signal(int) {
  signalled = 1;
}

} // namespace

TEST_CASE("a confined process cannot fork") {
  CHECK(run_confined([] {
    expect(failed_with(::fork(), EPERM), "fork() fails with EPERM");
    expect(failed_with(::waitpid(-1, nullptr, WNOHANG), ECHILD),
      "and no child appears");
  }) == "");
}

TEST_CASE("a confined process can still start and join a thread") {
  CHECK(run_confined([] {
    std::atomic<bool> ran{false};
    std::thread thread([&ran] {
      ran = true;
    });
    thread.join();
    expect(ran, "the thread ran");
  }) == "");
}

TEST_CASE("the filter holds in the threads of a confined process") {
  CHECK(run_confined([] {
    long forked = 0;
    int error = 0;
    std::thread thread([&] {
      forked = ::fork();
      error = errno;
    });
    thread.join();
    errno = error;
    expect(failed_with(forked, EPERM), "fork() in a thread fails with EPERM");
  }) == "");
}

TEST_CASE("a confined process can signal itself, and no other process") {
  CHECK(run_confined([] {
    expect(failed_with(::kill(::getppid(), 0), EPERM),
      "kill(getppid(), 0) fails with EPERM");
    expect(::kill(::getpid(), 0) == 0, "kill(getpid(), 0) succeeds");
    struct sigaction action {};
    action.sa_handler = on_signal;
    expect(::sigaction(SIGUSR1, &action, nullptr) == 0, "sigaction");
    expect(::raise(SIGUSR1) == 0, "raise(SIGUSR1) succeeds");
    expect(signalled == 1, "and delivers SIGUSR1 to the handler");
  }) == "");
}

TEST_CASE("a confined process can have no descriptor or terminal signal "
          "another process") {
  CHECK(run_confined([] {
    int fds[2];
    expect(::pipe(fds) == 0, "pipe");
    const pid_t parent = ::getppid();
    expect(failed_with(::fcntl(fds[0], F_SETOWN, parent), EPERM),
      "fcntl(F_SETOWN) fails with EPERM");
    f_owner_ex owner{F_OWNER_PID, parent};
    expect(failed_with(::fcntl(fds[0], F_SETOWN_EX, &owner), EPERM),
      "fcntl(F_SETOWN_EX) fails with EPERM");
    expect(failed_with(::fcntl(fds[0], F_SETSIG, SIGSTOP), EPERM),
      "fcntl(F_SETSIG) fails with EPERM");
    expect(failed_with(::ioctl(fds[0], FIOSETOWN, &parent), EPERM),
      "ioctl(FIOSETOWN) fails with EPERM");
    expect(failed_with(::ioctl(fds[0], SIOCSPGRP, &parent), EPERM),
      "ioctl(SIOCSPGRP) fails with EPERM");
    char typed = 'x';
    expect(failed_with(::ioctl(fds[0], TIOCSTI, &typed), EPERM),
      "ioctl(TIOCSTI) fails with EPERM");
    expect(failed_with(::ioctl(fds[0], TIOCSPGRP, &parent), EPERM),
      "ioctl(TIOCSPGRP) fails with EPERM");
    expect(::fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0, "fcntl(F_SETFL) works");
    expect(::fcntl(fds[0], F_GETFL) & O_NONBLOCK, "fcntl(F_GETFL) works");
  }) == "");
}

TEST_CASE("a confined process reads its own CPU clocks and no other "
          "process's") {
  CHECK(run_confined([] {
    timespec t{};
    expect(::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0,
      "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) works");
    expect(::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0,
      "clock_gettime(CLOCK_THREAD_CPUTIME_ID) works");
    // The parent's clock, as clock_getcpuclockid makes it (CPUCLOCK_SCHED).
    auto parents = static_cast<clockid_t>((~::getppid() << 3) | 2);
    expect(failed_with(::clock_gettime(parents, &t), EPERM),
      "clock_gettime of the parent's CPU clock fails with EPERM");
    expect(failed_with(::clock_getres(parents, &t), EPERM),
      "clock_getres of the parent's CPU clock fails with EPERM");
  }) == "");
}

TEST_CASE("a confined process cannot signal its process group or every "
          "process") {
  CHECK(run_confined([] {
    // Signal 0 first, which would do no harm should the filter let it
    // through.
    expect(failed_with(::kill(0, 0), EPERM), "kill(0, 0) fails with EPERM");
    expect(failed_with(::kill(-1, 0), EPERM), "kill(-1, 0) fails with EPERM");
    expect(failed_with(::kill(0, SIGUSR1), EPERM),
      "kill(0, SIGUSR1) fails with EPERM");
    expect(failed_with(::kill(-1, SIGUSR1), EPERM),
      "kill(-1, SIGUSR1) fails with EPERM");
  }) == "");
}

TEST_CASE("a confined process can neither trace nor read its parent") {
  static int secret = 7;
  CHECK(run_confined([] {
    expect(failed_with(
             ::ptrace(PTRACE_ATTACH, ::getppid(), nullptr, nullptr), EPERM),
      "ptrace(PTRACE_ATTACH, getppid()) fails with EPERM");
    int copy = 0;
    iovec local{&copy, sizeof(copy)};
    iovec remote{&secret, sizeof(secret)};
    expect(failed_with(
             ::process_vm_readv(::getppid(), &local, 1, &remote, 1, 0), EPERM),
      "process_vm_readv on the parent fails with EPERM");
  }) == "");
}

TEST_CASE("a confined process cannot change its CPU set") {
  CHECK(run_confined([] {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(0, &cpus);
    expect(failed_with(::sched_setaffinity(0, sizeof(cpus), &cpus), EPERM),
      "sched_setaffinity fails with EPERM");
  }) == "");
}

TEST_CASE("a confined process cannot open a socket") {
  CHECK(run_confined([] {
    expect(failed_with(::socket(AF_INET, SOCK_STREAM, 0), EPERM),
      "socket(AF_INET, SOCK_STREAM, 0) fails with EPERM");
  }) == "");
}

TEST_CASE("a confined process cannot rearrange the pages of a shared "
          "mapping") {
  CHECK(run_confined([] {
    void* at = ::mmap(nullptr, 2 * 4096, PROT_READ | PROT_WRITE,
      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    expect(at != MAP_FAILED, "mapped");
    expect(failed_with(::remap_file_pages(at, 4096, 0, 1, 0), EPERM),
      "remap_file_pages fails with EPERM");
  }) == "");
}

TEST_CASE("a confined process cannot take shared pages out of memory, and "
          "can still give back its own") {
  CHECK(run_confined([] {
    void* shared = ::mmap(
      nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    expect(shared != MAP_FAILED, "mapped");
    for (int advice : {MADV_REMOVE, MADV_COLD, MADV_PAGEOUT, 25})
      expect(failed_with(::madvise(shared, 4096, advice), EPERM),
        "madvise(" + std::to_string(advice) + ") fails with EPERM");
    // Nor start reads ahead, whose completions interrupt the timed core.
    expect(failed_with(::madvise(shared, 4096, MADV_WILLNEED), EPERM),
      "madvise(MADV_WILLNEED) fails with EPERM");
    void* own = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    expect(::madvise(own, 4096, MADV_DONTNEED) == 0,
      "madvise(MADV_DONTNEED) of its own memory works");
  }) == "");
}

TEST_CASE("a confined process cannot start reads of a file ahead") {
  // A red team's kernel started block I/O with posix_fadvise(WILLNEED) on
  // a library's uncached pages; the completions interrupted the timed core
  // in the baseline's calls. It may still read the file itself.
  CHECK(run_confined([] {
    int fd = ::open("/proc/self/exe", O_RDONLY);
    expect(fd >= 0, "open for reading works");
    expect(::posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED) == EPERM,
      "posix_fadvise(WILLNEED) fails with EPERM");
    expect(failed_with(::readahead(fd, 0, 4096), EPERM),
      "readahead fails with EPERM");
    char byte;
    expect(::pread(fd, &byte, 1, 0) == 1, "pread works");
  }) == "");
}

TEST_CASE("a confined process takes and tests no file lock") {
  // A red team's kernel held a read lock on a system file through each of
  // its calls: a process on the other core, testing the lock, aimed disk
  // interrupts at the baseline's calls.
  CHECK(run_confined([] {
    int fd = ::open("/proc/self/exe", O_RDONLY);
    expect(fd >= 0, "open for reading works");
    struct flock lock {};
    lock.l_type = F_RDLCK;
    lock.l_whence = SEEK_SET;
    lock.l_len = 1;
    for (int cmd :
      {F_SETLK, F_SETLKW, F_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_OFD_GETLK})
      expect(failed_with(::fcntl(fd, cmd, &lock), EPERM),
        "fcntl lock command " + std::to_string(cmd) + " fails with EPERM");
    expect(failed_with(::flock(fd, LOCK_SH | LOCK_NB), EPERM),
      "flock fails with EPERM");
    expect(::fcntl(fd, F_GETFL) >= 0, "fcntl(F_GETFL) works");
  }) == "");
}

TEST_CASE("a confined process can arm no timer and watch no descriptor") {
  CHECK(run_confined([] {
    expect(failed_with(::timerfd_create(CLOCK_MONOTONIC, 0), EPERM),
      "timerfd_create fails with EPERM");
    timer_t timer{};
    expect(failed_with(::timer_create(CLOCK_MONOTONIC, nullptr, &timer), EPERM),
      "timer_create fails with EPERM");
    itimerval every{{0, 1000}, {0, 1000}};
    expect(failed_with(::setitimer(ITIMER_REAL, &every, nullptr), EPERM),
      "setitimer fails with EPERM");
    expect(
      failed_with(::epoll_create1(0), EPERM), "epoll_create1 fails with EPERM");
    expect(
      failed_with(::inotify_init1(0), EPERM), "inotify_init1 fails with EPERM");
    // Sleeping still works.
    timespec nap{0, 1000};
    expect(::nanosleep(&nap, nullptr) == 0, "nanosleep works");
  }) == "");
}

TEST_CASE("a confined process writes no file and keeps no memory beyond "
          "its address space, and can still read files") {
  char dir_template[] = "/tmp/eat-seccomp-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  std::string dir = dir_template;
  auto existing = dir + "/existing";
  int made = ::open(existing.c_str(), O_WRONLY | O_CREAT, 0666);
  REQUIRE(made >= 0);
  ::close(made);
  auto fresh = dir + "/fresh";
  CHECK(run_confined([&] {
    for (int flags : {O_WRONLY | O_CREAT, O_RDWR, O_WRONLY, O_RDONLY | O_TRUNC,
           O_WRONLY | O_APPEND})
      expect(failed_with(::open(existing.c_str(), flags, 0666), EPERM),
        "open(flags " + std::to_string(flags) + ") fails with EPERM");
    expect(failed_with(
             ::openat(AT_FDCWD, fresh.c_str(), O_RDWR | O_CREAT, 0666), EPERM),
      "openat(O_RDWR | O_CREAT) fails with EPERM");
    expect(failed_with(::syscall(SYS_creat, fresh.c_str(), 0666), EPERM),
      "creat fails with EPERM");
    expect(failed_with(::mkdir(fresh.c_str(), 0777), EPERM),
      "mkdir fails with EPERM");
    expect(failed_with(::symlink(existing.c_str(), fresh.c_str()), EPERM),
      "symlink fails with EPERM");
    expect(failed_with(::rename(existing.c_str(), fresh.c_str()), EPERM),
      "rename fails with EPERM");
    expect(failed_with(::truncate(existing.c_str(), 0), EPERM),
      "truncate fails with EPERM");
    expect(failed_with(::unlink(existing.c_str()), EPERM),
      "unlink fails with EPERM");
    // On a pipe: should the filter let them through, they fail otherwise.
    int ends[2];
    expect(::pipe(ends) == 0, "pipe");
    expect(failed_with(::ftruncate(ends[1], 0), EPERM),
      "ftruncate fails with EPERM");
    expect(failed_with(::fallocate(ends[1],
                         FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096),
             EPERM),
      "fallocate fails with EPERM");
    expect(failed_with(::memfd_create("fill", 0), EPERM),
      "memfd_create fails with EPERM");
    expect(failed_with(::shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0600), EPERM),
      "shmget fails with EPERM");
    int in = ::open(existing.c_str(), O_RDONLY | O_CLOEXEC);
    expect(in >= 0, "open(O_RDONLY) works");
    ::close(in);
    int status = ::openat(AT_FDCWD, "/proc/self/status", O_RDONLY);
    expect(status >= 0, "openat(O_RDONLY) works");
    ::close(status);
  }) == "");
  // Nothing was made, renamed or removed.
  CHECK(::access(existing.c_str(), F_OK) == 0);
  CHECK(::access(fresh.c_str(), F_OK) != 0);
  ::unlink(existing.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("a confined process reads and sets only its own resource "
          "limits") {
  CHECK(run_confined([] {
    rlimit limit{};
    expect(
      failed_with(::prlimit(::getppid(), RLIMIT_CORE, nullptr, &limit), EPERM),
      "prlimit of its parent fails with EPERM");
    rlimit one{1, 1};
    expect(
      failed_with(::prlimit(::getppid(), RLIMIT_CPU, &one, nullptr), EPERM),
      "setting its parent's CPU-time limit fails with EPERM");
    expect(::prlimit(0, RLIMIT_CORE, nullptr, &limit) == 0,
      "prlimit of itself (0) works");
    expect(::prlimit(::getpid(), RLIMIT_CORE, nullptr, &limit) == 0,
      "prlimit of its own pid works");
    expect(::getrlimit(RLIMIT_AS, &limit) == 0, "getrlimit works");
    expect(::setrlimit(RLIMIT_CORE, &limit) == 0, "setrlimit works");
  }) == "");
}

TEST_CASE("a confined process cannot run a program") {
  // Should execve succeed, /bin/true's exit status 0 is not all_held.
  CHECK(run_confined([] {
    char arg0[] = "/bin/true";
    char* argv[] = {arg0, nullptr};
    expect(failed_with(::execve("/bin/true", argv, environ), EPERM),
      "execve(\"/bin/true\") fails with EPERM");
  }) == "");
}

TEST_CASE("clone3 looks absent to a confined process") {
  CHECK(run_confined([] {
    // Arguments the kernel itself would refuse with EINVAL.
    expect(failed_with(::syscall(SYS_clone3, nullptr, 0), ENOSYS),
      "clone3 fails with ENOSYS");
  }) == "");
}

#ifdef __x86_64__
TEST_CASE("a confined process cannot use the x32 system call ABI") {
  CHECK(run_confined([] {
    expect(failed_with(::syscall(0x40000000 | SYS_getpid), EPERM),
      "an x32 system call fails with EPERM");
  }) == "");
}
#endif

TEST_CASE("a confined process cannot set up io_uring") {
  CHECK(run_confined([] {
    io_uring_params params{};
    expect(failed_with(::syscall(SYS_io_uring_setup, 1, &params), EPERM),
      "io_uring_setup fails with EPERM");
  }) == "");
}

TEST_CASE("the filter leaves ordinary work alone") {
  CHECK(run_confined([] {
    constexpr size_t size = 64 << 20;
    auto* block = static_cast<char*>(std::malloc(size));
    expect(block != nullptr, "malloc of 64 MiB");
    std::memset(block, 1, size);
    std::free(block);
    void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    expect(map != MAP_FAILED, "mmap");
    static_cast<char*>(map)[size - 1] = 1;
    expect(::munmap(map, size) == 0, "munmap");
    timespec now{};
    expect(::clock_gettime(CLOCK_MONOTONIC, &now) == 0, "clock_gettime");
    int fds[2];
    expect(::pipe(fds) == 0, "pipe");
    expect(::write(fds[1], "x", 1) == 1, "write to a pipe");
    char x = 0;
    expect(::read(fds[0], &x, 1) == 1 && x == 'x', "read from a pipe");
  }) == "");
}

TEST_CASE("a confined process stays in its process group and keeps its "
          "parent-death signal") {
  CHECK(run_confined([] {
    expect(failed_with(::setsid(), EPERM), "setsid() fails with EPERM");
    expect(failed_with(::setpgid(0, 0), EPERM), "setpgid() fails with EPERM");
    expect(failed_with(::prctl(PR_SET_PDEATHSIG, 0), EPERM),
      "prctl(PR_SET_PDEATHSIG) fails with EPERM");
    expect(::prctl(PR_SET_NAME, "kernel") == 0, "prctl(PR_SET_NAME) works");
  }) == "");
}

TEST_CASE("a process kept in its process group and every process it "
          "starts cannot leave it while all else works") {
  CHECK(
    run_confined(
      [] {
        // The test's child is no group leader: setpgid would work.
        expect(
          failed_with(::setpgid(0, 0), EPERM), "setpgid() fails with EPERM");
        pid_t child = ::fork();
        expect(child >= 0, "fork() works");
        if (child == 0) {
          bool kept = failed_with(::setsid(), EPERM)
                      && failed_with(::setpgid(0, 0), EPERM);
          ::_exit(kept ? 0 : 1);
        }
        int status = -1;
        expect(::waitpid(child, &status, 0) == child, "waitpid() works");
        expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the child's setsid() and setpgid() fail with EPERM");
        std::atomic<bool> ran{false};
        std::thread([&] {
          ran = true;
        }).join();
        expect(ran, "a thread runs");
        expect(::prctl(PR_SET_PDEATHSIG, 0) == 0, "other prctl() calls work");
      },
      keep_in_process_group)
    == "");
}
