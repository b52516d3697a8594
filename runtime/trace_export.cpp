#include "runtime/trace_export.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "devices/kind.hpp"
#include "devices/sha256.hpp"
#include "persistence/event_log.hpp"
#include "persistence/run_history.hpp"
#include "runtime/report.hpp"
#include "runtime/run_loader.hpp"

namespace eat {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

/// JSON text of `j`; bytes that are not UTF-8 (a compiler log cut at its
/// size limit, a source in another encoding) become U+FFFD instead of
/// making nlohmann::json throw.
std::string text(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string safe_name(const std::string& s) {
  std::string out = s;
  for (auto& ch : out)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-'
        && ch != '.')
      ch = '_';
  return out;
}

std::string source_path(const std::string& backend) {
  if (backend == "cuda")
    return "kernel.cu";
  if (backend == "hip")
    return "kernel.hip";
  return "kernel.cpp";
}

/// A float as FlashInfer-Bench's Correctness serialises it: NaN and
/// infinities as the strings pydantic writes and reads back.
json error_value(double x) {
  if (std::isnan(x))
    return "NaN";
  if (std::isinf(x))
    return x > 0 ? "Infinity" : "-Infinity";
  return x;
}

/// Names of an fp32 kind's inputs in ABI order (docs/harness.md);
/// "input<i>" for a kind this table does not know.
std::vector<std::string> fp32_input_names(
  const devices::kind& k, const workload& w) {
  static const std::map<std::string, std::vector<std::string>> names
    = {{"gemm", {"a", "b"}}, {"rmsnorm", {"x", "w"}}, {"softmax", {"x"}}};
  auto count = k.sizes != nullptr && k.check_workload(w).empty()
                 ? k.sizes(k.dims(w)).inputs.size()
                 : size_t{0};
  auto i = names.find(k.name);
  if (i != names.end() && i->second.size() == count)
    return i->second;
  std::vector<std::string> out;
  for (size_t j = 0; j < count; ++j)
    out.push_back("input" + std::to_string(j));
  return out;
}

/// FlashInfer-Bench's input descriptors: a definition task's inputs as the
/// loader resolved them (scalars with their value), generated tensors of
/// every kind as "random".
/// The task's tolerance, for the correctness's `extra`: atol and rtol,
/// and the matched ratio, the cap and `deterministic` where the task sets
/// them.
json tolerance_extra(const task_spec& task) {
  json extra{{"atol", task.atol}, {"rtol", task.rtol}};
  if (task.matched_ratio < 1)
    extra["matched_ratio"] = task.matched_ratio;
  if (task.max_error > 0)
    extra["max_error"] = task.max_error;
  if (!task.deterministic)
    extra["deterministic"] = false;
  return extra;
}

json inputs_json(const devices::kind& k, const workload& w) {
  json inputs = json::object();
  for (const auto& in : w.inputs) {
    if (!in.scalar) {
      inputs[in.name] = {{"type", "random"}};
    } else if (in.dtype == "int32" || in.dtype == "int64") {
      inputs[in.name]
        = {{"type", "scalar"}, {"value", static_cast<int64_t>(in.value)}};
    } else {
      inputs[in.name] = {{"type", "scalar"}, {"value", in.value}};
    }
  }
  if (w.inputs.empty())
    for (const auto& name : fp32_input_names(k, w))
      inputs[name] = {{"type", "random"}};
  return inputs;
}

json workload_json(
  const task_spec& task, const devices::kind& k, const workload& w) {
  json axes = json::object();
  for (const auto& [name, value] : w.axes)
    axes[name] = value;
  return {{"axes", axes}, {"inputs", inputs_json(k, w)},
    {"uuid", workload_uuid(task.name, w)}};
}

/// Splits "g++ (Debian 12.2.0-14) 12.2.0; -O3 ..." into compiler and flags,
/// and picks "driver N" and "runtime N" out of a GPU's identity.
json environment_json(const eval_result& r) {
  json libs = json::object();
  auto semi = r.compiler.find(';');
  auto compiler = r.compiler.substr(0, semi);
  if (!compiler.empty())
    libs["compiler"] = compiler;
  auto flags = semi == std::string::npos
                 ? std::string::npos
                 : r.compiler.find_first_not_of(' ', semi + 1);
  if (flags != std::string::npos)
    libs["compiler_flags"] = r.compiler.substr(flags);
  for (std::string key : {"driver", "runtime"}) {
    auto at = r.device.find(", " + key + " ");
    if (at == std::string::npos)
      continue;
    auto begin = at + key.size() + 3;
    libs[key] = r.device.substr(begin, r.device.find(',', begin) - begin);
  }
  return {{"hardware", device_model(r.device)}, {"libs", libs}};
}

std::string passed_log(const workload_result& w) {
  return "eat: median of " + std::to_string(w.samples)
         + " paired samples each; speedup over the task's baseline "
         + fixed(w.speedup, 3) + "x, 95% CI [" + fixed(w.speedup_low, 3) + ", "
         + fixed(w.speedup_high, 3) + "]; candidate cv "
         + fixed(w.candidate_cv, 4);
}

/// The Evaluation object of one trace. `w` is null when the evaluation
/// stopped before any workload (the whole solution failed).
json evaluation_json(const task_spec& task, const eval_result& r,
  const workload_result* w, const std::string& status, int64_t unix_ms) {
  json e = {{"status", status}, {"environment", environment_json(r)},
    {"timestamp", iso_utc(unix_ms)}};
  if (r.status == eval_status::rejected)
    e["log"] = "rejected: " + r.detail;
  else if (status == "PASSED" && w != nullptr)
    e["log"] = passed_log(*w);
  else
    e["log"] = w != nullptr && !w->detail.empty() ? w->detail : r.detail;
  if (status == "COMPILE_ERROR" && !r.build_log.empty())
    e["log"] = e["log"].get<std::string>() + "\n" + r.build_log;
  if (w != nullptr && (status == "PASSED" || status == "INCORRECT_NUMERICAL"))
    e["correctness"] = {{"max_relative_error", error_value(w->max_rel_error)},
      {"max_absolute_error", error_value(w->max_abs_error)},
      {"extra", tolerance_extra(task)}};
  if (w != nullptr && status == "PASSED")
    e["performance"] = {{"latency_ms", w->candidate_median_ns / 1e6},
      {"reference_latency_ms", w->baseline_median_ns / 1e6},
      {"speedup_factor", w->speedup}};
  return e;
}

json solution_json(const task_spec& task, const std::string& name,
  const std::string& run_id, const candidate& c, const eval_result& r,
  const devices::kind& k) {
  auto path = source_path(task.backend);
  json deps = json::array();
  if (task.backend == "hip")
    deps.push_back("hip");
  if (!task.expert_source.empty() && c.source == task.expert_source)
    for (const auto& lib : task.expert_libs)
      deps.push_back(lib);
  json spec = {{"language", flashinfer_language(task.backend)},
    {"target_hardware", json::array({device_model(r.device)})},
    {"entry_point", path + "::" + k.entry}, {"dependencies", deps},
    {"destination_passing_style", true}};
  auto description = "eat candidate " + c.id + " of run " + run_id + ": "
                     + describe_kernel(c.family, c.params)
                     + (c.parent.empty() ? "" : ", derived from " + c.parent)
                     + "; source SHA-256 " + r.source_hash;
  return {{"name", name}, {"definition", definition_name(task)},
    {"author", c.team + "/" + c.agent}, {"spec", spec},
    {"sources", json::array({{{"path", path}, {"content", c.source}}})},
    {"description", description}};
}

/// The status a workload's trace gets: its own mapped, except that a
/// rejected evaluation discredits every workload it measured; nullopt for a
/// workload not reached.
std::optional<std::string> trace_status(
  const eval_result& r, const workload_result& w) {
  if (w.status == eval_status::pending)
    return std::nullopt;
  if (r.status == eval_status::rejected)
    return flashinfer_status(eval_status::rejected);
  return flashinfer_status(w.status);
}

} // namespace

std::optional<std::string> flashinfer_status(eval_status x) {
  switch (x) {
    case eval_status::passed: return "PASSED";
    case eval_status::incorrect: return "INCORRECT_NUMERICAL";
    case eval_status::compile_error: return "COMPILE_ERROR";
    case eval_status::runtime_error: return "RUNTIME_ERROR";
    case eval_status::timeout: return "TIMEOUT";
    case eval_status::rejected: return "RUNTIME_ERROR";
    case eval_status::pending: return std::nullopt;
  }
  return std::nullopt;
}

std::string definition_name(const task_spec& task) {
  if (!task.trace_definition.empty())
    return task.trace_definition;
  if (task.definition.empty())
    return task.name;
  auto d = json::parse(task.definition, nullptr, false);
  if (d.is_object() && d.contains("name") && d["name"].is_string()
      && !d["name"].get<std::string>().empty())
    return d["name"].get<std::string>();
  return task.name;
}

std::string device_model(const std::string& device) {
  auto colon = device.find(": ");
  auto rest = colon == std::string::npos ? device : device.substr(colon + 2);
  auto model = rest.substr(0, std::min(rest.find(" ("), rest.find(", ")));
  return model.empty() ? "unknown" : model;
}

std::string flashinfer_language(const std::string& backend) {
  return backend == "cuda" ? "cuda" : "cpp";
}

std::string workload_uuid(const std::string& task, const workload& w) {
  if (!w.uuid.empty())
    return w.uuid;
  std::string material = "eat-workload";
  material += '\0' + task + '\0' + w.name;
  for (const auto& [axis, value] : w.axes)
    material += '\0' + axis + '=' + std::to_string(value);
  auto h = devices::sha256_hex(material);
  const char* variant = "89ab";
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-8" + h.substr(13, 3) + "-"
         + variant[std::stoi(h.substr(16, 1), nullptr, 16) & 3]
         + h.substr(17, 3) + "-" + h.substr(20, 12);
}

std::string iso_utc(int64_t unix_ms) {
  auto t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  auto n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(
    buf + n, sizeof(buf) - n, ".%03dZ", static_cast<int>(unix_ms % 1000));
  return buf;
}

caf::expected<exported_solution> export_candidate(const task_spec& task,
  const std::string& run_id, const candidate& c, const eval_result& r,
  int64_t unix_ms) {
  const auto* k = devices::find_kind(task.kind);
  auto overall = flashinfer_status(r.status);
  if (c.source.empty() || k == nullptr || !overall)
    return make_error(error::malformed_message,
      "candidate " + c.id + " cannot be exported: "
        + (c.source.empty() ? "its source is empty"
           : k == nullptr   ? "unknown task kind " + task.kind
                            : "it was not evaluated"));
  exported_solution out;
  out.name = safe_name(run_id + "_" + c.id);
  out.json = text(solution_json(task, out.name, run_id, c, r, *k), 2) + "\n";
  auto add = [&](const workload& w, const workload_result* res,
               const std::string& status) {
    json t = {{"definition", definition_name(task)},
      {"workload", workload_json(task, *k, w)}, {"solution", out.name},
      {"evaluation", evaluation_json(task, r, res, status, unix_ms)}};
    out.traces.push_back(text(t, -1));
    out.statuses.push_back(status);
  };
  bool reached_any = false;
  for (const auto& w : r.workloads)
    reached_any = reached_any || w.status != eval_status::pending;
  // With no workload measured, PASSED and INCORRECT_NUMERICAL would need
  // metrics nobody took: such workloads count as not reached.
  bool whole
    = !reached_any && *overall != "PASSED" && *overall != "INCORRECT_NUMERICAL";
  for (const auto& w : task.workloads) {
    auto res = std::find_if(
      r.workloads.begin(), r.workloads.end(), [&](const auto& x) {
        return x.workload == w.name;
      });
    if (whole) {
      add(w, nullptr, *overall);
    } else if (res == r.workloads.end() || !trace_status(r, *res)) {
      ++out.not_reached;
    } else {
      add(w, &*res, *trace_status(r, *res));
    }
  }
  return out;
}

caf::expected<trace_export> build_trace_export(const std::vector<event>& log) {
  auto history = rebuild(log);
  if (!history)
    return history.error();
  if (!history->started)
    return make_error(
      error::invalid_run_dir, "the run's log is empty: it never started");
  std::map<std::string, int64_t> finished_at;
  std::vector<std::string> order;
  for (const auto& e : log) {
    if (e.kind != event_kind::evaluation_finished)
      continue;
    auto r = wire::decode<eval_result>(e.body);
    if (!r)
      return r.error();
    if (finished_at.count(r->candidate) == 0)
      order.push_back(r->candidate);
    finished_at[r->candidate] = e.unix_ms;
  }
  if (order.empty())
    return make_error(error::invalid_run_dir,
      "run " + history->start.run_id
        + " has no evaluated candidate yet: nothing to export");
  const auto& task = history->start.spec;
  trace_export out;
  out.definition = definition_name(task);
  out.unevaluated = history->candidates.size() - order.size();
  for (const auto& id : order) {
    auto x = export_candidate(task, history->start.run_id,
      history->candidates.at(id), history->results.at(id), finished_at[id]);
    if (!x) {
      out.skipped.push_back(render(x.error()));
      continue;
    }
    for (const auto& s : x->statuses)
      ++out.by_status[s];
    out.not_reached += x->not_reached;
    out.solutions.push_back(std::move(*x));
  }
  return out;
}

caf::expected<trace_export> read_trace_export(
  const std::filesystem::path& run_dir) {
  auto store = open_run_store_dir(run_dir);
  if (!store)
    return store.error();
  auto events = persistence::event_log{**store}.read(1);
  if (!events)
    return events.error();
  return build_trace_export(*events);
}

caf::expected<written_export> write_trace_export(
  const trace_export& x, const std::filesystem::path& out_dir) {
  auto fail = [](const fs::path& p, const std::string& why) {
    return make_error(
      error::io_failure, "cannot write " + p.string() + ": " + why);
  };
  written_export out;
  for (auto dir : {out_dir / "solutions", out_dir / "traces"}) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
      return fail(dir, ec.message());
  }
  auto write
    = [&](const fs::path& p, const std::string& text) -> caf::expected<void> {
    std::ofstream file{p, std::ios::binary | std::ios::trunc};
    file << text;
    file.close();
    if (!file)
      return fail(p, "the file cannot be opened or written");
    return caf::unit;
  };
  for (const auto& s : x.solutions) {
    auto p = out_dir / "solutions" / (s.name + ".json");
    if (auto ok = write(p, s.json); !ok)
      return ok.error();
    out.solution_files.push_back(p);
  }
  std::string lines;
  for (const auto& s : x.solutions)
    for (const auto& t : s.traces)
      lines += t + "\n";
  out.trace_file = out_dir / "traces" / (safe_name(x.definition) + ".jsonl");
  if (auto ok = write(out.trace_file, lines); !ok)
    return ok.error();
  return out;
}

} // namespace eat
