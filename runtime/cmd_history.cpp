// `eat history RUN_DIR [--since N] [--json]`: the run's event log.

#include <cstdlib>

#include "actors/protocol/json.hpp"
#include "persistence/event_log.hpp"
#include "runtime/cli.hpp"
#include "runtime/event_summary.hpp"
#include "runtime/run_loader.hpp"

namespace eat {

namespace {

constexpr const char* help = R"(usage: eat history RUN_DIR [--since N] [--json]

Prints the run's evolution history, the append-only event log, from event N
(default 1): one line per event with its sequence number, time, kind and a
summary. --json prints one JSON object per line instead, with the event's
body decoded (docs/wire-format.md), for other tools.
)";

} // namespace

exit_code cmd_history(const std::vector<std::string>& args,
                      std::ostream& out) {
  auto parsed = parse_args(args, {"since"}, {"json"});
  if (!parsed)
    return usage_error(out, render(parsed.error()), "history");
  if (parsed->help) {
    out << help;
    return exit_code::ok;
  }
  if (parsed->positional.size() != 1)
    return usage_error(out, "history takes exactly one RUN_DIR", "history");
  uint64_t since = 1;
  if (auto s = parsed->options.find("since"); s != parsed->options.end()) {
    char* end = nullptr;
    since = std::strtoull(s->second.c_str(), &end, 10);
    if (end == s->second.c_str() || *end != '\0' || since == 0)
      return usage_error(out, "--since expects a positive integer, got '"
                                + s->second + "'",
                         "history");
  }
  auto store = open_run_store_dir(parsed->positional[0]);
  if (!store) {
    out << "eat: " << render(store.error()) << "\n";
    return exit_code_for(store.error());
  }
  auto events = persistence::event_log{**store}.read(since);
  if (!events) {
    out << "eat: " << render(events.error()) << "\n";
    return exit_code_for(events.error());
  }
  auto json = parsed->options.count("json") > 0;
  for (const auto& e : *events) {
    if (!json) {
      out << event_summary(e) << "\n";
      continue;
    }
    auto line = wire::event_to_json(e);
    if (!line) {
      out << "eat: " << render(line.error()) << "\n";
      return exit_code_for(line.error());
    }
    out << *line << "\n";
  }
  return exit_code::ok;
}

} // namespace eat
