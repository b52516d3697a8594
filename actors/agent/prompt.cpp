#include "actors/agent/prompt.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "actors/agent/definition_text.hpp"
#include "actors/agent/render.hpp"
#include "actors/protocol/error.hpp"
#include "devices/kinds/tolerance.hpp"

namespace eat {

const char* const answer_format_text
  = "Answer with the complete new kernel in one fenced C++ code block "
    "(```cpp ... ```), or with SEARCH/REPLACE edits to the parent kernel, "
    "each block written as:\n"
    "<<<<<<< SEARCH\n(lines copied exactly from the parent)\n=======\n"
    "(the lines that replace them)\n>>>>>>> REPLACE\n"
    "Every SEARCH section must match the parent exactly once. Keep the entry "
    "point's name and signature; only the kernel code is yours to change.";

const char* const default_role_template
  = "# Task {{task}} ({{kind}}, {{backend}}, {{dtype}})\n\n"
    "{{description}}\n\n"
    "Tolerance: {{tolerance}}. Workloads:\n{{workloads}}\n\n"
    "# Your role: {{role}}, strategy {{strategy}}\n\n"
    "Make the kernel below faster on every workload while keeping results "
    "within the tolerance.\n\n"
    "# Parent kernel {{parent_id}} ({{parent_status}}, speedup "
    "{{parent_speedup}})\n\n{{parent}}\n\n"
    "# What the team has learned\n\n{{learning}}\n\n"
    "# Recent candidates\n\n{{history}}\n\n"
    "Token budget left: {{budget}}.\n\n{{answer_format}}\n";

namespace {

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, x);
  return buf;
}

std::string params_text(const param_map& params) {
  std::string out;
  for (const auto& [name, value] : params)
    out += (out.empty() ? "" : ", ") + name + "=" + value;
  return out.empty() ? "-" : out;
}

std::string workloads_text(const task_spec& t) {
  std::string out;
  for (const auto& w : t.workloads) {
    std::string axes;
    for (const auto& [axis, value] : w.axes)
      axes += (axes.empty() ? "" : ", ") + axis + "=" + std::to_string(value);
    out += "- " + w.name + ": " + axes + "\n";
  }
  return out.empty() ? "(none listed)" : out;
}

std::string history_text(
  const std::vector<scored_candidate>& history, size_t rows) {
  if (history.empty())
    return "(none yet)";
  auto first = history.size() > rows ? history.size() - rows : 0;
  std::string out = "| id | family | params | status | speedup |\n"
                    "|---|---|---|---|---|\n";
  for (auto i = first; i < history.size(); ++i) {
    const auto& c = history[i];
    out += "| " + c.id + " | " + c.family + " | " + params_text(c.params)
           + " | " + to_string(c.status) + " | " + fixed(c.speedup, 3) + " |\n";
  }
  return out;
}

std::map<std::string, std::string> prompt_values(
  const assignment& a, const std::string& parent_source, size_t history_rows) {
  const auto& t = a.task;
  const auto& p = a.parent;
  bool fresh = p.id.empty();
  return {
    {"role", a.role},
    {"team", a.team},
    {"agent", a.agent},
    {"strategy", a.strategy},
    {"task", t.name},
    {"kind", t.kind},
    {"backend", t.backend},
    {"dtype", t.dtype},
    {"description", t.description.empty() ? "(no description)" : t.description},
    {"tolerance", "|a - b| <= " + fixed(t.atol, 6) + " + " + fixed(t.rtol, 6)
                    + " * |ref|" + devices::task_tolerance_text(t)},
    {"workloads", workloads_text(t) + definition_text(t)},
    {"baseline", "```cpp\n" + t.baseline_source + "```"},
    {"parent_id", fresh ? "baseline" : p.id},
    {"parent_family", fresh ? "baseline" : p.family},
    {"parent_status", fresh ? "baseline" : to_string(p.status)},
    {"parent_speedup", fresh ? "1.000" : fixed(p.speedup, 3)},
    {"parent",
      "```cpp\n" + parent_source
        + (parent_source.empty() || parent_source.back() == '\n' ? "" : "\n")
        + "```"},
    {"learning", a.learning.empty() ? "(nothing yet)" : a.learning},
    {"history", history_text(a.history, history_rows)},
    {"budget", a.token_budget == 0
                 ? "unlimited"
                 : std::to_string(a.token_budget) + " tokens"},
    {"answer_format", answer_format_text},
  };
}

std::string known_names(const std::map<std::string, std::string>& values) {
  std::string out;
  for (const auto& [name, value] : values)
    out += (out.empty() ? "" : ", ") + name;
  return out;
}

} // namespace

caf::expected<std::string> load_role_template(
  const std::filesystem::path& dir, const std::string& role) {
  if (dir.empty())
    return std::string{default_role_template};
  auto path = dir / (role + ".md");
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return make_error(error::invalid_config, "no prompt template for role '"
                                               + role + "': cannot read "
                                               + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

caf::expected<std::string> parent_source(const assignment& a) {
  const auto& p = a.parent;
  if (p.id.empty() || p.family == "baseline")
    return a.task.baseline_source;
  for (const auto& family : a.task.families)
    if (family.name == p.family)
      return render_template(family, p.params);
  return make_error(error::agent_failed, "the source of parent " + p.id
                                           + " (family '" + p.family
                                           + "') is not in the assignment");
}

caf::expected<prompt_text> render_prompt(const std::string& role_template,
  const assignment& a, const std::string& parent_source, size_t history_rows) {
  auto values = prompt_values(a, parent_source, history_rows);
  template_family family;
  family.name = "prompt for role '" + a.role + "'";
  family.source = role_template;
  if (family.source.find("{{answer_format}}") == std::string::npos)
    family.source += "\n\n{{answer_format}}\n";
  param_map chosen;
  for (const auto& ph : find_placeholders(family.source)) {
    auto i = values.find(ph.name);
    if (i == values.end())
      return make_error(
        error::invalid_config, family.name + ", line " + std::to_string(ph.line)
                                 + ": unknown placeholder {{" + ph.name
                                 + "}} (known: " + known_names(values) + ")");
    if (chosen.emplace(ph.name, i->second).second)
      family.params.push_back({ph.name, {i->second}});
  }
  auto user = render_template(family, chosen);
  if (!user)
    return make_error(error::invalid_config, render(user.error()));
  prompt_text result;
  result.system = "You are the " + (a.role.empty() ? "engineer" : a.role)
                  + " of team " + a.team
                  + ", an expert performance engineer who writes fast, "
                    "correct "
                  + a.task.backend + " kernels.";
  result.user = std::move(*user);
  return result;
}

uint64_t estimate_tokens(const std::string& text) {
  return (text.size() + 2) / 3;
}

} // namespace eat
