// Running `eat`'s commands in this process, for their tests.

#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "runtime/cli.hpp"

namespace eat::test {

/// What `eat ARGS` returned and printed.
struct cli_result {
  exit_code code;
  std::string out;
};

/// Runs `eat ARGS` in this process (run_cli), capturing what it prints.
inline cli_result eat_cli(std::vector<std::string> args) {
  std::ostringstream out;
  auto code = run_cli(args, out);
  return {code, out.str()};
}

} // namespace eat::test
