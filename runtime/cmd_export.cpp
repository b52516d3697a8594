// `eat export traces RUN_DIR [--out DIR]`: the run's evaluations as a
// FlashInfer-Bench dataset (runtime/trace_export.hpp, docs/interop.md).

#include "runtime/cli.hpp"
#include "runtime/trace_export.hpp"

namespace eat {

namespace {

namespace fs = std::filesystem;

constexpr const char* export_help
  = R"(usage: eat export traces RUN_DIR [--out DIR]

Writes the run's evaluations in FlashInfer-Bench's dataset format
(docs/interop.md): DIR/solutions/<run>_<candidate>.json, one Solution per
evaluated candidate, and DIR/traces/<task>.jsonl, one Trace per candidate
and workload with its status (PASSED, INCORRECT_NUMERICAL, COMPILE_ERROR,
RUNTIME_ERROR, TIMEOUT), correctness, performance and environment. DIR
defaults to RUN_DIR/export; files of the same names are replaced. Reads the
run without locking it, so it works on a finished, crashed or running run.
)";

std::string status_counts(const trace_export& x) {
  std::string out;
  for (const auto& [status, n] : x.by_status)
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + status;
  return out.empty() ? "none" : out;
}

} // namespace

exit_code cmd_export(const std::vector<std::string>& args, std::ostream& out) {
  auto parsed = parse_command(args,
    {"export", export_help, {"out"}, {}, 2, 2, "'traces' and a RUN_DIR"}, out);
  if (auto* code = std::get_if<exit_code>(&parsed))
    return *code;
  auto& a = std::get<parsed_args>(parsed);
  if (a.positional[0] != "traces")
    return usage_error(out,
      "unknown export '" + a.positional[0] + "' (known: traces)", "export");
  fs::path run_dir = a.positional[1];
  auto x = read_trace_export(run_dir);
  if (!x)
    return report(out, x.error());
  auto dir = a.options.count("out") > 0 ? fs::path{a.options["out"]}
                                        : run_dir / "export";
  auto written = write_trace_export(*x, dir);
  if (!written)
    return report(out, written.error());
  uint64_t traces = 0;
  for (const auto& s : x->solutions)
    traces += s.traces.size();
  out << "wrote " << written->solution_files.size() << " solutions to "
      << (dir / "solutions").string() << "\n"
      << "wrote " << traces << " traces to " << written->trace_file.string()
      << ": " << status_counts(*x) << "\n";
  if (x->not_reached > 0)
    out << x->not_reached
        << " workloads not reached (an earlier workload failed): no trace\n";
  if (x->unevaluated > 0)
    out << x->unevaluated << " candidates not evaluated yet: not exported\n";
  for (const auto& why : x->skipped)
    out << "skipped: " << why << "\n";
  return exit_code::ok;
}

} // namespace eat
