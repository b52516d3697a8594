// The `eat` command line: subcommands, their arguments and help texts
// (docs/cli.md). Each command writes what it shows a person to `out` and
// returns an exit code; main.cpp only forwards argv. Main thread only.

#pragma once

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <variant>
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

/// What a command accepts, for parse_command.
struct command_syntax {
  /// The command's name, e.g. "fsck".
  const char* name;
  /// The text --help prints.
  const char* help;
  /// Options that take a value (--name VALUE) and flags (--name).
  std::set<std::string> with_value = {};
  std::set<std::string> flags = {};
  /// How many positional arguments it takes, and how to say so.
  size_t min_positional = 0;
  size_t max_positional = 0;
  const char* positional_what = "no arguments";
};

/// Parses a command's arguments. Returns the exit code to return at once
/// after printing the help (ok) or a usage error (usage), else the
/// arguments.
std::variant<parsed_args, exit_code>
parse_command(const std::vector<std::string>& args,
              const command_syntax& syntax, std::ostream& out);

/// The value of option `name` as an integer of at least `min` (0 or 1) and
/// at most 2^63 - 1 (a TOML integer), `fallback` when absent;
/// invalid_arguments naming the option otherwise.
caf::expected<uint64_t> integer_option(const parsed_args& args,
  const std::string& name, uint64_t fallback, uint64_t min);

/// integer_option with `min` 1.
caf::expected<uint64_t> positive_option(const parsed_args& args,
                                        const std::string& name,
                                        uint64_t fallback);

/// Prints "eat: <what>" for `err` and returns the exit code for it.
exit_code report(std::ostream& out, const caf::error& err);

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
exit_code cmd_compare(const std::vector<std::string>& args, std::ostream& out);
/// `eat export traces RUN_DIR` (runtime/cmd_export.cpp).
exit_code cmd_export(const std::vector<std::string>& args, std::ostream& out);

/// Prints "eat: <what>" for a usage error plus a hint, returns usage.
exit_code usage_error(std::ostream& out, const std::string& what,
                      const std::string& command);

} // namespace eat
