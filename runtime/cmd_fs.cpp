// `eat fs ls|cat|log|export RUN_DIR ...`: browse a run's versioned file
// namespace (docs/store-layout.md). Read-only; works while the run goes on.

#include <cstdio>
#include <ctime>

#include "persistence/export_tree.hpp"
#include "persistence/file_tree.hpp"
#include "runtime/cli.hpp"
#include "runtime/run_loader.hpp"

namespace eat {

namespace {

constexpr const char* help = R"(usage: eat fs ls RUN_DIR [PATH]
       eat fs cat RUN_DIR PATH [--version N]
       eat fs log RUN_DIR PATH
       eat fs export RUN_DIR OUT_DIR

Browses the run's file namespace: the learning document (/learning.md), the
configuration (/config.toml), and per team its notes, best kernel and every
candidate's kernel.cpp, result.md and build.log. Every write is a version;
'cat --version N' reads an older one, 'log' lists them. 'export' writes the
latest version of every file under OUT_DIR (absent or empty), as a plain
directory tree for a person or a coding agent to read.
)";

std::string when(int64_t unix_ms) {
  auto t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

exit_code fs_ls(persistence::file_tree& files, const std::string& dir,
                std::ostream& out) {
  auto entries = files.list(dir);
  if (!entries) {
    out << "eat: " << render(entries.error()) << "\n";
    return exit_code_for(entries.error());
  }
  for (const auto& e : *entries)
    if (e.is_dir)
      out << e.name << "/\n";
    else
      out << e.name << "  (v" << e.version << ", " << e.size << " bytes)\n";
  return exit_code::ok;
}

exit_code fs_log(persistence::file_tree& files, const std::string& path,
                 std::ostream& out) {
  auto versions = files.log(path);
  if (!versions) {
    out << "eat: " << render(versions.error()) << "\n";
    return exit_code_for(versions.error());
  }
  for (const auto& v : *versions)
    out << "v" << v.version << "  " << when(v.unix_ms) << " UTC  " << v.size
        << " bytes  by " << (v.author.empty() ? "?" : v.author) << "  sha256 "
        << v.blob << "\n";
  return exit_code::ok;
}

exit_code fs_cat(persistence::file_tree& files, const std::string& path,
                 const std::string& version, std::ostream& out) {
  uint64_t v = 0;
  if (!version.empty()) {
    char* end = nullptr;
    v = std::strtoull(version.c_str(), &end, 10);
    if (end == version.c_str() || *end != '\0' || v == 0)
      return usage_error(out, "--version expects a positive integer, got '"
                                + version + "'",
                         "fs");
  }
  auto bytes = files.get(path, v);
  if (!bytes) {
    out << "eat: " << render(bytes.error()) << "\n";
    return exit_code_for(bytes.error());
  }
  out << *bytes;
  return exit_code::ok;
}

exit_code fs_export(persistence::file_tree& files, const std::string& dir,
                    std::ostream& out) {
  auto n = persistence::export_tree(files, dir);
  if (!n) {
    out << "eat: " << render(n.error()) << "\n";
    return exit_code_for(n.error());
  }
  out << "exported " << *n << " files to " << dir << "\n";
  return exit_code::ok;
}

} // namespace

exit_code cmd_fs(const std::vector<std::string>& args, std::ostream& out) {
  auto parsed = parse_args(args, {"version"});
  if (!parsed)
    return usage_error(out, render(parsed.error()), "fs");
  if (parsed->help) {
    out << help;
    return exit_code::ok;
  }
  const auto& pos = parsed->positional;
  if (pos.size() < 2)
    return usage_error(out, "fs needs a subcommand and a RUN_DIR", "fs");
  const auto& sub = pos[0];
  auto arity_ok = (sub == "ls" && pos.size() <= 3)
                  || ((sub == "cat" || sub == "log" || sub == "export")
                      && pos.size() == 3);
  if (!arity_ok)
    return usage_error(out, "wrong arguments for 'fs " + sub + "'", "fs");
  auto store = open_run_store_dir(pos[1]);
  if (!store) {
    out << "eat: " << render(store.error()) << "\n";
    return exit_code_for(store.error());
  }
  persistence::file_tree files{**store};
  if (sub == "ls")
    return fs_ls(files, pos.size() == 3 ? pos[2] : "/", out);
  if (sub == "log")
    return fs_log(files, pos[2], out);
  if (sub == "cat")
    return fs_cat(files, pos[2], parsed->options["version"], out);
  return fs_export(files, pos[2], out);
}

} // namespace eat
