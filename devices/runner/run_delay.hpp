// Time that other tasks took from a timed call (docs/harness.md, "Other
// tasks on the device's core").
//
// Nothing reserves the device's core: a process that eat did not start
// may run there while a kernel is timed, and a bursty one slows the
// baseline's long calls more than a short candidate's (a red team's load of
// 300 us on, 300 us off turned a 29x sgemm into 37 - 39x). Linux keeps, for
// each thread, the time it spent ready to run but waiting for its core
// (`run_delay`, the second figure of /proc/<pid>/schedstat, with
// CONFIG_SCHED_INFO), and the time it ran (the first). The harness reads
// them around each timed call, for the thread that makes the call (the
// runner's own, or the main thread of the kernel's process), and takes the
// time other tasks had the core off the sample.
//
// A kernel's own threads (and, in the runner's process, processes) also
// make the calling thread wait: what they ran in the interval is not taken
// off (others_time_ns). Nor is what interrupts take: they are no task.

#pragma once

#include <cstdint>
#include <string>

#include <sys/types.h>

namespace eat::devices {

/// One reading of a thread's schedstat, in ns; -1 when it could not be read.
struct sched_reading {
  int64_t ran_ns = -1;
  int64_t waited_ns = -1;
};

/// An open /proc/.../schedstat of one thread. Opened once, read many
/// times (each read is one pread, a few microseconds).
class schedstat_file {
public:
  schedstat_file() = default;
  schedstat_file(const schedstat_file&) = delete;
  schedstat_file& operator=(const schedstat_file&) = delete;
  schedstat_file(schedstat_file&& other) noexcept;
  schedstat_file& operator=(schedstat_file&& other) noexcept;
  ~schedstat_file();

  /// The calling thread's.
  static schedstat_file of_this_thread();

  /// The main thread of `pid`, a process the caller started and has not
  /// reaped, numbered as in the caller's PID namespace (/proc may be the
  /// machine's: the number there is found through a pidfd).
  static schedstat_file of_child(pid_t pid);

  bool is_open() const {
    return fd_ >= 0;
  }

  /// Why it is not open ("" when it is).
  const std::string& why_not() const {
    return why_not_;
  }

  /// Reads it now.
  sched_reading read() const;

  /// One that reads the open descriptor `fd` (checked by a first read),
  /// and one that is not open, for `why`.
  static schedstat_file adopt(int fd);
  static schedstat_file failed(std::string why);

private:
  int fd_ = -1;
  std::string why_not_;
};

/// Parses a schedstat's text ("<ran ns> <waited ns> <timeslices>").
sched_reading parse_schedstat(const std::string& text);

/// The time other tasks had the core between readings `before` and
/// `after` of the thread that made a call, while the kernel's other threads
/// and processes used `own_ns` of CPU time: the thread's wait less `own_ns`,
/// at least 0; 0 when a reading failed.
int64_t others_time_ns(
  sched_reading before, sched_reading after, int64_t own_ns);

} // namespace eat::devices
