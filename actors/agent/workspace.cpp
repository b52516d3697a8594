#include "actors/agent/workspace.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

#include "actors/agent/definition_text.hpp"
#include "actors/protocol/error.hpp"
#include "devices/kinds/tolerance.hpp"
#include "devices/sha256.hpp"

namespace eat {

namespace fs = std::filesystem;

namespace {

/// Files larger than this are fingerprinted by size and time, not hashed.
constexpr uintmax_t max_hashed_bytes = uintmax_t{256} << 20;
/// More entries than this fail the snapshot.
constexpr size_t max_snapshot_entries = 100'000;

caf::error io_error(const std::string& what, const std::error_code& ec) {
  return make_error(error::io_failure, what + ": " + ec.message());
}

caf::expected<void> write_file(const fs::path& path, const std::string& text) {
  std::ofstream out{path, std::ios::binary | std::ios::trunc};
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out)
    return make_error(error::io_failure, "cannot write " + path.string());
  return {};
}

caf::expected<std::string> fingerprint(
  const fs::directory_entry& entry, uintmax_t& hashed, uintmax_t budget) {
  std::error_code ec;
  auto st = entry.symlink_status(ec);
  if (ec)
    return io_error("cannot stat " + entry.path().string(), ec);
  if (fs::is_symlink(st))
    return "symlink:" + fs::read_symlink(entry.path(), ec).string();
  if (!fs::is_regular_file(st))
    return std::string{"special"};
  auto size = entry.file_size(ec);
  if (!ec && (size > max_hashed_bytes || hashed + size > budget)) {
    auto time = entry.last_write_time(ec).time_since_epoch().count();
    return "large:" + std::to_string(size) + ":" + std::to_string(time);
  }
  hashed += size;
  std::ifstream in{entry.path(), std::ios::binary};
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in)
    return make_error(error::io_failure,
                      "cannot read " + entry.path().string());
  return devices::sha256_hex(bytes.str());
}

std::string format_double(double x, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, x);
  return buf;
}

std::string workload_list(const task_spec& t) {
  std::string out;
  for (const auto& w : t.workloads) {
    out += "- `" + w.name + "`:";
    for (const auto& [axis, value] : w.axes)
      out += " " + axis + "=" + std::to_string(value);
    out += "\n";
  }
  return out.empty() ? std::string{"(none listed)\n"} : out;
}

std::string parent_text(const scored_candidate& p) {
  if (p.id.empty())
    return "none: kernel.cpp holds the task's naive baseline";
  std::string text = p.id + " (" + p.family;
  for (const auto& [k, v] : p.params)
    text += ", " + k + "=" + v;
  return text + ", " + to_string(p.status) + ")";
}

std::string replace_all(std::string text, const std::string& key,
                        const std::string& value) {
  for (size_t pos = text.find(key); pos != std::string::npos;
       pos = text.find(key, pos + value.size()))
    text.replace(pos, key.size(), value);
  return text;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

} // namespace

caf::expected<fs::path> make_fresh_dir(const fs::path& base) {
  std::error_code ec;
  fs::create_directories(base.parent_path(), ec);
  if (ec)
    return io_error("cannot create " + base.parent_path().string(), ec);
  for (int i = 1; i < 10000; ++i) {
    auto dir = i == 1 ? base : fs::path{base.string() + "." + std::to_string(i)};
    if (fs::create_directory(dir, ec))
      return dir;
    if (ec)
      return io_error("cannot create " + dir.string(), ec);
  }
  return make_error(error::io_failure, "no free directory name for "
                                         + base.string());
}

caf::expected<void> materialise_workspace(const fs::path& dir,
                                          const workspace_spec& spec) {
  const std::pair<const char*, const std::string*> files[] = {
    {"TASK.md", &spec.task_md},         {"AGENTS.md", &spec.rules_md},
    {"CLAUDE.md", &spec.rules_md},      {"kernel.cpp", &spec.kernel},
    {"LEARNINGS.md", &spec.learnings_md}, {"NOTES.md", &spec.notes_md},
    {"eval", &spec.eval_script},
  };
  for (const auto& [name, text] : files)
    if (auto ok = write_file(dir / name, *text); !ok)
      return ok;
  std::error_code ec;
  fs::permissions(dir / "eval",
                  fs::perms::owner_all | fs::perms::group_read
                    | fs::perms::group_exec | fs::perms::others_read
                    | fs::perms::others_exec,
                  ec);
  if (ec)
    return io_error("cannot make eval executable", ec);
  for (const char* sub : {"scratch", ".eat"})
    if (fs::create_directory(dir / sub, ec); ec)
      return io_error("cannot create " + (dir / sub).string(), ec);
  return {};
}

caf::expected<workspace_snapshot> snapshot_workspace(
  const fs::path& dir, uintmax_t hash_budget) {
  workspace_snapshot snap;
  uintmax_t hashed = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it{dir, ec};
  if (ec)
    return io_error("cannot list " + dir.string(), ec);
  for (fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec)
      return io_error("cannot list " + dir.string(), ec);
    if (it->is_directory(ec) && !it->is_symlink(ec))
      continue;
    if (snap.size() >= max_snapshot_entries)
      return make_error(error::io_failure,
        dir.string() + " has more than " + std::to_string(max_snapshot_entries)
          + " files; eat does not look through so many");
    auto print = fingerprint(*it, hashed, hash_budget);
    if (!print)
      return std::move(print.error());
    // Lexically: fs::relative would follow a symlink to its target.
    snap[it->path().lexically_relative(dir).generic_string()] = *print;
  }
  if (ec)
    return io_error("cannot list " + dir.string(), ec);
  return snap;
}

std::vector<workspace_change> diff_snapshots(const workspace_snapshot& before,
                                             const workspace_snapshot& after) {
  std::vector<workspace_change> changes;
  for (const auto& [path, print] : after) {
    auto old = before.find(path);
    if (old == before.end())
      changes.push_back({path, "added"});
    else if (old->second != print)
      changes.push_back({path, "changed"});
  }
  for (const auto& [path, print] : before)
    if (after.count(path) == 0)
      changes.push_back({path, "removed"});
  std::sort(changes.begin(), changes.end(),
            [](const auto& x, const auto& y) { return x.path < y.path; });
  return changes;
}

bool change_allowed(const std::string& path,
                    const std::vector<std::string>& allowed) {
  if (path == "kernel.cpp" || path.rfind("scratch/", 0) == 0)
    return true;
  for (const auto& rule : allowed) {
    if (rule.empty())
      continue;
    if (rule.back() == '/' && path.rfind(rule, 0) == 0)
      return true;
    if (rule.back() == '*'
        && path.rfind(rule.substr(0, rule.size() - 1), 0) == 0)
      return true;
    if (rule == path)
      return true;
  }
  return false;
}

std::string render_prompt(const std::string& tmpl, const assignment& a) {
  const auto& t = a.task;
  const std::pair<std::string, std::string> values[] = {
    {"{{task}}", t.name},
    {"{{kind}}", t.kind},
    {"{{backend}}", t.backend},
    {"{{dtype}}", t.dtype},
    {"{{tolerance}}", "atol " + format_double(t.atol, "%g") + ", rtol "
                        + format_double(t.rtol, "%g")
                        + devices::task_tolerance_text(t)},
    {"{{workloads}}", workload_list(t) + definition_text(t)},
    {"{{strategy}}", a.strategy.empty() ? std::string{"local"} : a.strategy},
    {"{{role}}", a.role},
    {"{{team}}", a.team},
    {"{{agent}}", a.agent},
    {"{{parent}}", parent_text(a.parent)},
    {"{{parent_speedup}}", a.parent.id.empty()
                             ? std::string{"1.00x (the baseline)"}
                             : format_double(a.parent.speedup, "%.2fx")},
    {"{{token_budget}}", a.token_budget == 0 ? std::string{"unlimited"}
                                             : std::to_string(a.token_budget)},
    {"{{history_count}}", std::to_string(a.history.size())},
  };
  auto text = tmpl;
  for (const auto& [key, value] : values)
    text = replace_all(std::move(text), key, value);
  return text;
}

std::string render_notes(const assignment& a) {
  std::string out = "# Team notes: " + a.team + "\n\n";
  if (a.history.empty())
    return out + "No candidate of this team has been evaluated yet.\n";
  out += "Candidates evaluated so far, oldest first (speedup: geometric mean "
         "over the workloads, vs. the naive baseline).\n\n"
         "| id | family | params | status | speedup |\n"
         "|----|--------|--------|--------|---------|\n";
  for (const auto& c : a.history) {
    std::string params;
    for (const auto& [k, v] : c.params)
      params += (params.empty() ? "" : ", ") + k + "=" + v;
    out += "| " + c.id + " | " + c.family + " | " + params + " | "
           + to_string(c.status) + " | "
           + (c.status == eval_status::passed
                ? format_double(c.speedup, "%.3fx")
                : std::string{"-"})
           + " |\n";
  }
  return out;
}

std::string make_eval_script(const std::string& eat_program) {
  std::string head = "#!/bin/sh\n"
                     "# Benchmarks ./kernel.cpp on the run's device and prints"
                     " the result.\n"
                     "# Written by eat: do not edit (an edited eval rejects "
                     "the attempt).\n";
  if (eat_program.empty())
    return head
           + "echo 'evaluation unavailable: eat was not given its own path' "
             ">&2\nexit 2\n";
  return head + "cd \"$(dirname \"$0\")\" || exit 2\nexec "
         + shell_quote(eat_program) + " agent-eval .eat/eval.sock kernel.cpp\n";
}

} // namespace eat
