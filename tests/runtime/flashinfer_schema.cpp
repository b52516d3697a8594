#include "tests/runtime/flashinfer_schema.hpp"

#include <set>

namespace eat::test {

namespace {

using json = nlohmann::json;

void only_keys(const json& j, const std::set<std::string>& allowed,
  const std::string& where, problems& out) {
  if (!j.is_object()) {
    out.push_back(where + " is not an object");
    return;
  }
  for (const auto& [key, value] : j.items())
    if (allowed.count(key) == 0)
      out.push_back(where + " has unknown field '" + key + "'");
}

bool non_empty_string(const json& j, const std::string& key) {
  return j.contains(key) && j[key].is_string()
         && !j[key].get<std::string>().empty();
}

void require_strings(const json& j, const std::vector<std::string>& keys,
  const std::string& where, problems& out) {
  for (const auto& k : keys)
    if (!non_empty_string(j, k))
      out.push_back(where + "." + k + " is not a non-empty string");
}

bool error_field(const json& j) {
  if (j.is_number())
    return j.get<double>() >= 0;
  return j.is_string() && (j == "NaN" || j == "Infinity");
}

void check_evaluation(const json& e, problems& out) {
  only_keys(e,
    {"status", "environment", "timestamp", "log", "correctness", "performance"},
    "evaluation", out);
  static const std::set<std::string> statuses
    = {"PASSED", "INCORRECT_SHAPE", "INCORRECT_NUMERICAL", "INCORRECT_DTYPE",
      "RUNTIME_ERROR", "COMPILE_ERROR", "TIMEOUT"};
  auto status = e.value("status", std::string{});
  if (statuses.count(status) == 0)
    out.push_back("evaluation.status '" + status + "' is not a status");
  require_strings(e, {"timestamp"}, "evaluation", out);
  if (e.contains("log") && !e["log"].is_string())
    out.push_back("evaluation.log is not a string");
  auto env = e.value("environment", json{});
  only_keys(env, {"hardware", "libs"}, "environment", out);
  require_strings(env, {"hardware"}, "environment", out);
  auto libs = env.value("libs", json::object());
  for (const auto& [k, v] : libs.items())
    if (!v.is_string())
      out.push_back("environment.libs." + k + " is not a string");
  bool has_c = e.contains("correctness") && !e["correctness"].is_null();
  bool has_p = e.contains("performance") && !e["performance"].is_null();
  if (has_c) {
    const auto& c = e["correctness"];
    only_keys(c, {"max_relative_error", "max_absolute_error", "extra"},
      "correctness", out);
    for (auto k : {"max_relative_error", "max_absolute_error"})
      if (c.contains(k) && !error_field(c[k]))
        out.push_back(std::string{"correctness."} + k + " is not >= 0");
  }
  if (has_p) {
    const auto& p = e["performance"];
    only_keys(p, {"latency_ms", "reference_latency_ms", "speedup_factor"},
      "performance", out);
    for (auto k : {"latency_ms", "reference_latency_ms", "speedup_factor"})
      if (p.contains(k) && !(p[k].is_number() && p[k].get<double>() >= 0))
        out.push_back(std::string{"performance."} + k + " is not >= 0");
  }
  // The status-dependent rules of Evaluation's model validator.
  bool want_c = status == "PASSED" || status == "INCORRECT_NUMERICAL";
  bool want_p = status == "PASSED";
  if (has_c != want_c)
    out.push_back(
      status + (want_c ? " lacks" : " must not have") + " correctness");
  if (has_p != want_p)
    out.push_back(
      status + (want_p ? " lacks" : " must not have") + " performance");
}

} // namespace

problems check_solution(const json& s) {
  problems out;
  only_keys(s,
    {"name", "definition", "author", "spec", "sources", "description"},
    "solution", out);
  require_strings(s, {"name", "definition", "author"}, "solution", out);
  const auto& spec = s.value("spec", json{});
  only_keys(spec,
    {"language", "target_hardware", "entry_point", "dependencies",
      "destination_passing_style", "binding"},
    "spec", out);
  static const std::set<std::string> languages
    = {"python", "triton", "cpp", "cuda", "tilelang"};
  if (!spec.is_object() || !spec.contains("language")
      || languages.count(spec["language"].get<std::string>()) == 0)
    out.push_back("spec.language is not a supported language");
  auto hw = spec.value("target_hardware", json{});
  if (!hw.is_array() || hw.empty() || !hw[0].is_string())
    out.push_back("spec.target_hardware is not a non-empty list of strings");
  auto entry = spec.value("entry_point", std::string{});
  auto sep = entry.find("::");
  if (sep == std::string::npos
      || entry.find("::", sep + 1) != std::string::npos)
    out.push_back("spec.entry_point is not '<file>::<function>'");
  for (const auto& d : spec.value("dependencies", json::array()))
    if (!d.is_string() || d.get<std::string>().empty())
      out.push_back("spec.dependencies holds a non-string");
  if (spec.contains("destination_passing_style")
      && !spec["destination_passing_style"].is_boolean())
    out.push_back("spec.destination_passing_style is not a bool");
  std::set<std::string> paths;
  auto sources = s.value("sources", json{});
  if (!sources.is_array() || sources.empty())
    out.push_back("sources is not a non-empty list");
  for (const auto& src : sources) {
    only_keys(src, {"path", "content"}, "source", out);
    require_strings(src, {"path", "content"}, "source", out);
    auto p = src.value("path", std::string{});
    if (!p.empty() && (p[0] == '/' || p.find("..") != std::string::npos))
      out.push_back("source path " + p + " escapes the solution");
    if (!paths.insert(p).second)
      out.push_back("duplicate source path " + p);
  }
  if (paths.count(entry.substr(0, sep)) == 0)
    out.push_back("entry file " + entry.substr(0, sep) + " is not a source");
  if (s.contains("description") && !s["description"].is_string()
      && !s["description"].is_null())
    out.push_back("description is not a string");
  return out;
}

/// A float field of Correctness: a number >= 0, or NaN/Infinity as strings.
problems check_trace(const json& t) {
  problems out;
  only_keys(
    t, {"definition", "workload", "solution", "evaluation"}, "trace", out);
  require_strings(t, {"definition", "solution"}, "trace", out);
  auto w = t.value("workload", json{});
  only_keys(w, {"axes", "inputs", "uuid"}, "workload", out);
  require_strings(w, {"uuid"}, "workload", out);
  auto axes = w.value("axes", json::object());
  for (const auto& [k, v] : axes.items())
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      out.push_back("workload.axes." + k + " is not a non-negative integer");
  auto inputs = w.value("inputs", json{});
  if (!inputs.is_object())
    out.push_back("workload.inputs is not an object");
  for (const auto& [k, v] : inputs.items())
    if (v.value("type", "") != "random" && v.value("type", "") != "scalar"
        && v.value("type", "") != "safetensors")
      out.push_back("workload.inputs." + k + " has no known type");
  check_evaluation(t.value("evaluation", json{}), out);
  return out;
}

} // namespace eat::test
