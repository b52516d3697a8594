// The `eat` command line: subcommands, their arguments and help texts
// (docs/cli.md). Each command writes what it shows a person to `out` and
// returns an exit code; main.cpp only forwards argv. Main thread only.

#pragma once

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "runtime/exit_codes.hpp"

namespace eat {

/// A command line split into positional arguments and --options.
struct parsed_args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
  bool help = false;
};

/// Splits `args`: `--name VALUE` for names in `with_value`, `--name` alone for
/// names in `flags`, `-h`/`--help` anywhere. Unknown options are errors
/// (invalid_arguments).
caf::expected<parsed_args> parse_args(const std::vector<std::string>& args,
                                      const std::set<std::string>& with_value,
                                      const std::set<std::string>& flags = {});

/// Runs `eat ARGS...` (without the program name).
exit_code run_cli(const std::vector<std::string>& args, std::ostream& out);

exit_code cmd_run(const std::vector<std::string>& args, std::ostream& out);
exit_code cmd_resume(const std::vector<std::string>& args, std::ostream& out);
exit_code cmd_status(const std::vector<std::string>& args, std::ostream& out);
exit_code cmd_tasks(const std::vector<std::string>& args, std::ostream& out);
exit_code cmd_devices(const std::vector<std::string>& args, std::ostream& out);
exit_code cmd_fs(const std::vector<std::string>& args, std::ostream& out);
exit_code cmd_history(const std::vector<std::string>& args, std::ostream& out);
exit_code cmd_fsck(const std::vector<std::string>& args, std::ostream& out);

/// Prints "eat: <what>" for a usage error plus a hint, returns usage.
exit_code usage_error(std::ostream& out, const std::string& what,
                      const std::string& command);

} // namespace eat
