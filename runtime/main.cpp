// The `eat` program: forwards its arguments to the command line (cli.hpp).

#include <iostream>
#include <string>
#include <vector>

#include "runtime/cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args{argv + 1, argv + argc};
  return static_cast<int>(eat::run_cli(args, std::cout));
}
