// The `eat` program: forwards its arguments to the command line (cli.hpp).

#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "runtime/cli.hpp"

namespace {

extern "C" void on_sigpipe(int) {
  // nop: the write that raised it fails with EPIPE instead
}

/// A reader of eat's output that goes away (`eat run ... | head`) must not
/// kill a run: SIGPIPE then only fails the write, and output is dropped.
/// A handler rather than SIG_IGN, which the programs eat starts (runners,
/// compilers, agents) would inherit; a handler is reset at their exec.
void survive_closed_output() {
  struct sigaction action {};
  action.sa_handler = on_sigpipe;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGPIPE, &action, nullptr);
}

} // namespace

int main(int argc, char** argv) {
  survive_closed_output();
  std::vector<std::string> args{argv + 1, argv + argc};
  return static_cast<int>(eat::run_cli(args, std::cout));
}
