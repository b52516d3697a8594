#include "tests/runtime/process.hpp"

#include <csignal>
#include <stdexcept>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace eat::test {

child_process::child_process(
  const std::string& program, const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe2 failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  auto rc = posix_spawn(
    &pid_, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  fd_ = fds[0];
  if (rc != 0)
    throw std::runtime_error("cannot start " + program);
}

child_process::~child_process() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  if (fd_ >= 0)
    ::close(fd_);
}

bool child_process::read_line(std::string& line) {
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    char chunk[4096];
    auto n = ::read(fd_, chunk, sizeof(chunk));
    if (n <= 0) {
      if (buffer_.empty())
        return false;
      line = std::move(buffer_);
      buffer_.clear();
      return true;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void child_process::close_output() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

void child_process::kill(int sig) {
  ::kill(pid_, sig);
}

int child_process::wait() {
  if (!reaped_) {
    ::waitpid(pid_, &status_, 0);
    reaped_ = true;
  }
  return status_;
}

int child_process::finish(std::string& rest) {
  std::string line;
  while (read_line(line))
    rest += line + "\n";
  return wait();
}

} // namespace eat::test
