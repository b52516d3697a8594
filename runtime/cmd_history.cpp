// `eat history RUN_DIR [--since N] [--json]`: the run's event log.

#include "actors/protocol/json.hpp"
#include "persistence/event_log.hpp"
#include "runtime/cli.hpp"
#include "runtime/event_summary.hpp"
#include "runtime/run_loader.hpp"

namespace eat {

namespace {

constexpr const char* history_help
  = R"(usage: eat history RUN_DIR [--since N] [--json]

Prints the run's evolution history, the append-only event log, from event N
(default 1): one line per event with its sequence number, time, kind and a
summary. --json prints one JSON object per line instead, with the event's
body decoded (docs/wire-format.md), for other tools.
)";

} // namespace

exit_code cmd_history(const std::vector<std::string>& args,
                      std::ostream& out) {
  auto parsed = parse_command(args,
    {"history", history_help, {"since"}, {"json"}, 1, 1, "exactly one RUN_DIR"},
    out);
  if (auto* code = std::get_if<exit_code>(&parsed))
    return *code;
  auto& a = std::get<parsed_args>(parsed);
  auto since = positive_option(a, "since", 1);
  if (!since)
    return usage_error(out, render(since.error()), "history");
  auto store = open_run_store_dir(a.positional[0]);
  if (!store)
    return report(out, store.error());
  auto events = persistence::event_log{**store}.read(*since);
  if (!events)
    return report(out, events.error());
  auto json = a.options.count("json") > 0;
  auto expected = *since;
  for (const auto& e : *events) {
    // A log is numbered 1, 2, 3, ... with no gap: one means an event was
    // lost (the store is damaged), and listing on would hide it.
    if (e.seq != expected)
      return report(
        out, make_error(error::store_failure,
               "the event log has no event " + std::to_string(expected)
                 + " (the next is " + std::to_string(e.seq)
                 + "): the store is damaged (eat fsck lists every problem)"));
    ++expected;
    // Decoded in both forms: the summary alone printed "(undecodable
    // body: ...)" and went on with exit 0.
    auto line = wire::event_to_json(e);
    if (!line)
      return report(
        out, make_error(error::store_failure,
               "event " + std::to_string(e.seq) + ": " + render(line.error())));
    out << (json ? *line : event_summary(e)) << "\n";
  }
  return exit_code::ok;
}

} // namespace eat
