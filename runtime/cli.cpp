#include "runtime/cli.hpp"

#include "actors/agent/eval_channel.hpp"

#include <charconv>
#include <cstdint>
#include <cstdlib>

#include "actors/protocol/error.hpp"

namespace eat {

namespace {

constexpr const char* version = "0.1.0";

constexpr const char* main_help = R"(usage: eat <command> [arguments]

Evolving Agent Teams: teams of agents optimise compute kernels, devices
benchmark every candidate, everything is kept in the run's store.

commands:
  run CONFIG        start a run from a TOML configuration (--mode, --seed)
  compare CONFIG    run the eat, flat and single modes on equal budgets
  resume RUN_DIR    continue a stopped or crashed run from its log
  status RUN_DIR    show a run's progress and best kernel
  tasks             list the tasks, or show one (tasks show NAME)
  history RUN_DIR   print the run's event log (--since N, --json)
  fs SUB RUN_DIR    browse the run's files: ls, cat, log, export
  fsck RUN_DIR      check the run's store for consistency
  export traces RUN_DIR
                    write FlashInfer-Bench solutions and traces (--out DIR)
  devices           list this machine's CPU and GPUs (--check runs a kernel)
  help [COMMAND]    show this help, or a command's help

Every command takes -h/--help. Exit codes: 0 ok, 1 run failed, 2 usage error,
3 invalid configuration or task, 4 bad run directory or store, 5 store
inconsistent (fsck), 130 interrupted (resumable). See docs/cli.md.
)";

} // namespace

caf::expected<parsed_args> parse_args(const std::vector<std::string>& args,
  const std::set<std::string>& with_value, const std::set<std::string>& flags) {
  parsed_args out;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "-h" || a == "--help") {
      out.help = true;
    } else if (a.rfind("--", 0) == 0) {
      auto name = a.substr(2);
      if (with_value.count(name) > 0) {
        if (i + 1 >= args.size())
          return make_error(
            error::invalid_arguments, "option " + a + " needs a value");
        out.options[name] = args[++i];
      } else if (flags.count(name) > 0) {
        out.options[name] = "true";
      } else {
        return make_error(error::invalid_arguments, "unknown option " + a);
      }
    } else {
      out.positional.push_back(a);
    }
  }
  return out;
}

std::variant<parsed_args, exit_code>
parse_command(const std::vector<std::string>& args,
              const command_syntax& syntax, std::ostream& out) {
  auto parsed = parse_args(args, syntax.with_value, syntax.flags);
  if (!parsed)
    return usage_error(out, render(parsed.error()), syntax.name);
  if (parsed->help) {
    out << syntax.help;
    return exit_code::ok;
  }
  auto n = parsed->positional.size();
  if (n < syntax.min_positional || n > syntax.max_positional)
    return usage_error(out,
                       std::string{syntax.name} + " takes "
                         + syntax.positional_what,
                       syntax.name);
  return std::move(*parsed);
}

caf::expected<uint64_t> integer_option(const parsed_args& args,
  const std::string& name, uint64_t fallback, uint64_t min) {
  auto i = args.options.find(name);
  if (i == args.options.end())
    return fallback;
  const auto& text = i->second;
  uint64_t value = 0;
  auto [end, ec]
    = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range
      || (ec == std::errc{} && end == text.data() + text.size()
          && value > static_cast<uint64_t>(INT64_MAX)))
    return make_error(error::invalid_arguments, "--" + name + ": '" + text
                                                  + "' is larger than "
                                                  + std::to_string(INT64_MAX));
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()
      || value < min)
    return make_error(error::invalid_arguments,
      "--" + name + " expects a " + (min == 0 ? "non-negative" : "positive")
        + " integer, got '" + text + "'");
  return value;
}

caf::expected<uint64_t> positive_option(
  const parsed_args& args, const std::string& name, uint64_t fallback) {
  return integer_option(args, name, fallback, 1);
}

exit_code report(std::ostream& out, const caf::error& err) {
  out << "eat: " << render(err) << "\n";
  return exit_code_for(err);
}

exit_code usage_error(
  std::ostream& out, const std::string& what, const std::string& command) {
  out << "eat: " << what << "\n"
      << "try 'eat " << (command.empty() ? "" : command + " ") << "--help'\n";
  return exit_code::usage;
}

exit_code run_cli(const std::vector<std::string>& args, std::ostream& out) {
  if (args.empty()) {
    out << main_help;
    return exit_code::usage;
  }
  const auto& cmd = args[0];
  std::vector<std::string> rest{args.begin() + 1, args.end()};
  if (cmd == "-h" || cmd == "--help") {
    out << main_help;
    return exit_code::ok;
  }
  if (cmd == "help") {
    if (rest.empty()) {
      out << main_help;
      return exit_code::ok;
    }
    return run_cli({rest[0], "--help"}, out);
  }
  if (cmd == "--version" || cmd == "version") {
    if (!rest.empty())
      return usage_error(out, cmd + " takes no arguments", "");
    out << "eat " << version << "\n";
    return exit_code::ok;
  }
  if (cmd == "run")
    return cmd_run(rest, out);
  if (cmd == "resume")
    return cmd_resume(rest, out);
  if (cmd == "status")
    return cmd_status(rest, out);
  if (cmd == "tasks")
    return cmd_tasks(rest, out);
  if (cmd == "devices")
    return cmd_devices(rest, out);
  if (cmd == "fs")
    return cmd_fs(rest, out);
  if (cmd == "history")
    return cmd_history(rest, out);
  if (cmd == "fsck")
    return cmd_fsck(rest, out);
  if (cmd == "compare")
    return cmd_compare(rest, out);
  if (cmd == "export")
    return cmd_export(rest, out);
  if (cmd == "agent-eval") {
    // Used by the `eval` script in a cli agent's workspace
    // (docs/agent-cli.md): submits kernel.cpp to the run's devices.
    std::vector<char*> argv;
    for (const auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    return static_cast<exit_code>(
      agent_eval_main(static_cast<int>(argv.size()), argv.data()));
  }
  return usage_error(out, "unknown command '" + cmd + "'", "");
}

} // namespace eat
