// `eat fs ls|cat|log|export RUN_DIR ...`: browse a run's versioned file
// namespace (docs/store-layout.md). Read-only; works while the run goes on.

#include <cstdio>

#include "persistence/export_tree.hpp"
#include "persistence/file_tree.hpp"
#include "runtime/cli.hpp"
#include "runtime/report.hpp"
#include "runtime/run_loader.hpp"

namespace eat {

namespace {

constexpr const char* fs_help = R"(usage: eat fs ls RUN_DIR [PATH]
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

exit_code fs_ls(persistence::file_tree& files, const std::string& dir,
                std::ostream& out) {
  auto entries = files.list(dir);
  if (!entries)
    return report(out, entries.error());
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
  if (!versions)
    return report(out, versions.error());
  for (const auto& v : *versions)
    out << "v" << v.version << "  " << format_utc(v.unix_ms) << " UTC  " << v.size
        << " bytes  by " << (v.author.empty() ? "?" : v.author) << "  sha256 "
        << v.blob << "\n";
  return exit_code::ok;
}

exit_code fs_cat(persistence::file_tree& files, const parsed_args& a,
                 std::ostream& out) {
  auto version = positive_option(a, "version", 0);
  if (!version)
    return usage_error(out, render(version.error()), "fs");
  auto bytes = files.get(a.positional[2], *version);
  if (!bytes)
    return report(out, bytes.error());
  out << *bytes;
  return exit_code::ok;
}

exit_code fs_export(persistence::file_tree& files, const std::string& dir,
                    std::ostream& out) {
  auto n = persistence::export_tree(files, dir);
  if (!n)
    return report(out, n.error());
  out << "exported " << *n << " files to " << dir << "\n";
  return exit_code::ok;
}

} // namespace

exit_code cmd_fs(const std::vector<std::string>& args, std::ostream& out) {
  auto parsed = parse_command(args,
    {"fs", fs_help, {"version"}, {}, 2, 3, "a subcommand and a RUN_DIR"}, out);
  if (auto* code = std::get_if<exit_code>(&parsed))
    return *code;
  auto& a = std::get<parsed_args>(parsed);
  const auto& pos = a.positional;
  const auto& sub = pos[0];
  auto arity_ok = (sub == "ls" && pos.size() <= 3)
                  || ((sub == "cat" || sub == "log" || sub == "export")
                      && pos.size() == 3);
  if (!arity_ok)
    return usage_error(out, "wrong arguments for 'fs " + sub + "'", "fs");
  auto store = open_run_store_dir(pos[1]);
  if (!store)
    return report(out, store.error());
  persistence::file_tree files{**store};
  if (sub == "ls")
    return fs_ls(files, pos.size() == 3 ? pos[2] : "/", out);
  if (sub == "log")
    return fs_log(files, pos[2], out);
  if (sub == "cat")
    return fs_cat(files, a, out);
  return fs_export(files, pos[2], out);
}

} // namespace eat
