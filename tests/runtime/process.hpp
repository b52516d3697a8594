// Test helper: runs the real `eat` program as a child process and reads its
// output line by line, so that tests can act on what it prints (e.g. kill it
// after its second evaluation) without sleeping.

#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

namespace eat::test {

class child_process {
public:
  /// Starts `program args...` with stdout and stderr on a pipe.
  child_process(const std::string& program,
                const std::vector<std::string>& args);
  ~child_process();

  /// Next line of output; false at end of output.
  bool read_line(std::string& line);
  /// Closes the reading end of the child's output, as a reader that goes
  /// away does (`eat run ... | head -1`).
  void close_output();
  /// Sends `sig` to the child.
  void kill(int sig);
  /// Waits for the child; returns its raw wait status.
  int wait();
  /// Reads all remaining output, waits, and returns the raw wait status.
  int finish(std::string& rest);

private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buffer_;
  bool reaped_ = false;
  int status_ = 0;
};

} // namespace eat::test
