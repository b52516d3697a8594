// Export of a run's evaluations in FlashInfer-Bench's dataset format
// (`eat export traces`, docs/interop.md): one Solution JSON per evaluated
// candidate and one Trace JSONL line per (candidate, workload), so that
// FlashInfer-Bench's `TraceSet.from_path` and other tools that speak its
// schema can read what eat measured.
//
// Building an export is a pure function of a run's event log; reading the
// log and writing the files are two helpers around it. Plain code owned by
// the command that calls it; any thread.

#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/event.hpp"
#include "actors/protocol/result.hpp"
#include "actors/protocol/task.hpp"

namespace eat {

/// FlashInfer-Bench's EvaluationStatus for one of ours, e.g. "PASSED" for
/// passed; nullopt for pending, which is not the outcome of an evaluation.
/// The table is in docs/interop.md.
std::optional<std::string> flashinfer_status(eval_status x);

/// FlashInfer-Bench's definition name for `task`: the `name` in its
/// definition.json for a definition task (so traces join FlashInfer-Bench's
/// own), else its `trace_definition`, else the task's name.
std::string definition_name(const task_spec& task);

/// The device model in a device identity (eval_result::device): the text
/// after "<id>: " up to the first " (" or ", ", e.g. "NVIDIA H200" for
/// "gpu0: NVIDIA H200 (sm_90, GPU-...), driver ...". "unknown" when empty.
std::string device_model(const std::string& device);

/// FlashInfer-Bench's language for a task backend: "cpp" for cpu and hip
/// (FlashInfer-Bench has no HIP language; docs/interop.md), "cuda" for cuda.
std::string flashinfer_language(const std::string& backend);

/// The uuid of workload `w` of task `task`: the one of its workloads.jsonl
/// line when it has one (definition tasks), so that traces join FlashInfer-
/// Bench's own; otherwise a stable UUID (RFC 9562 version 8, from SHA-256):
/// the same task and workload give the same UUID in every run.
std::string workload_uuid(const std::string& task, const workload& w);

/// "2026-11-30T10:58:41.123Z" for milliseconds since the Unix epoch.
std::string iso_utc(int64_t unix_ms);

/// One evaluated candidate, as FlashInfer-Bench records it.
struct exported_solution {
  /// The Solution's name, also its file name: "<run id>_<candidate id>",
  /// with characters outside [A-Za-z0-9_.-] replaced by '_'.
  std::string name;
  /// The Solution JSON text (indented, like FlashInfer-Bench's files).
  std::string json;
  /// One Trace JSON text (no newline) per workload with an outcome.
  std::vector<std::string> traces;
  /// FlashInfer-Bench status of each trace, in the order of `traces`.
  std::vector<std::string> statuses;
  /// Workloads the evaluation stopped before reaching: no trace for them.
  uint64_t not_reached = 0;
};

/// Exports candidate `c`, evaluated with result `r` at `unix_ms`, of the run
/// `run_id` on `task`. Fails (malformed_message) for a candidate that cannot
/// be a Solution: empty source, unknown task kind, pending result.
caf::expected<exported_solution> export_candidate(const task_spec& task,
  const std::string& run_id, const candidate& c, const eval_result& r,
  int64_t unix_ms);

/// A whole run's export.
struct trace_export {
  /// FlashInfer-Bench's definition name (definition_name).
  std::string definition;
  std::vector<exported_solution> solutions;
  /// Traces by FlashInfer-Bench status, e.g. {"PASSED": 12}.
  std::map<std::string, uint64_t> by_status;
  /// Workloads not reached, summed over candidates.
  uint64_t not_reached = 0;
  /// Candidates submitted but not (yet) evaluated: no Solution for them.
  uint64_t unevaluated = 0;
  /// Evaluated candidates that could not be exported, with why.
  std::vector<std::string> skipped;
};

/// Builds the export of a run from its whole event log. Fails
/// (invalid_run_dir) for a log without run_started or without any
/// evaluated candidate, and on a log that does not fit together.
caf::expected<trace_export> build_trace_export(const std::vector<event>& log);

/// Reads the log of the run in `run_dir` read-only (it may be running,
/// stopped or crashed) and builds its export.
caf::expected<trace_export> read_trace_export(
  const std::filesystem::path& run_dir);

/// The files an export was written to.
struct written_export {
  std::vector<std::filesystem::path> solution_files;
  std::filesystem::path trace_file;
};

/// Writes `x` under `out_dir`: solutions/<name>.json and
/// traces/<definition>.jsonl, replacing files of the same names. Fails
/// (io_failure) when a directory or file cannot be written.
caf::expected<written_export> write_trace_export(
  const trace_export& x, const std::filesystem::path& out_dir);

} // namespace eat
