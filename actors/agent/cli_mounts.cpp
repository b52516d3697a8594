#include "actors/agent/cli_mounts.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "actors/agent/cli_home.hpp"
#include "actors/agent/run_registry.hpp"

namespace eat {

namespace fs = std::filesystem;

namespace {

/// `path` absolute, with symbolic links resolved where it exists: the
/// keeper mounts it as the kernel names it.
std::string canonical_path(const fs::path& path) {
  std::error_code ec;
  auto out = fs::weakly_canonical(fs::absolute(path), ec);
  return ec ? fs::absolute(path).lexically_normal().string() : out.string();
}

/// Whether `path` is `folder` or lies under it (both canonical).
bool lies_in(const fs::path& path, const fs::path& folder) {
  auto rel = path.lexically_relative(folder);
  return !rel.empty() && *rel.begin() != "..";
}

/// The registered runs a CLI does not see, and the read-only paths that
/// they hold, shown again after them.
struct hidden_runs {
  std::vector<std::string> hidden;
  std::vector<std::string> shown_again;
};

/// The runs of eat's registry (run_registry.hpp) that a CLI does not see:
/// all but one that holds eat's home, and one that is a path of
/// `opts.read_only` (its own run, its workspaces where an absolute
/// work_dir puts them): a folder hidden and then shown again came back
/// empty, with the tmpfs that hid it (every `--run-dir` run failed). They
/// are hidden after `opts.read_only` is shown again (a run in the tasks
/// folder or in eat's own showed again, a run in /tmp too, where the CLI's
/// own /tmp had made hiding it first a no-op), and then the paths of
/// `opts.read_only` that lie in one of them are shown again in turn (an
/// outer run that held the CLI's own lay open: red team).
hidden_runs runs_to_hide(const cli_agent_options& opts) {
  hidden_runs out;
  if (!opts.run_registry)
    return out;
  auto home = eat_home();
  std::vector<std::string> shown;
  for (const auto& path : opts.read_only)
    shown.push_back(canonical_path(path));
  std::vector<bool> again(shown.size(), false);
  for (const auto& run : registered_runs(*opts.run_registry)) {
    auto folder = canonical_path(run);
    if ((home && lies_in(canonical_path(*home), folder))
        || std::find(shown.begin(), shown.end(), folder) != shown.end())
      continue;
    for (size_t i = 0; i < shown.size(); ++i)
      again[i] = again[i] || lies_in(shown[i], folder);
    out.hidden.push_back(std::move(folder));
  }
  for (size_t i = 0; i < shown.size(); ++i)
    if (again[i])
      out.shown_again.push_back(shown[i]);
  return out;
}

} // namespace

std::optional<fs::path> eat_home() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] != '/' || home[1] == '\0')
    return std::nullopt;
  return fs::path{home};
}

bool gets_mounts(const cli_agent_options& opts) {
  return opts.namespaces && !opts.read_only.empty();
}

/// What a CLI may write: nothing but temporary folders of its own, its
/// team's copies of the `home_paths` of its home (cli_home.hpp) and its
/// workspace, none of `opts.read_only` (the run directory, ...), and the
/// other workspaces are hidden (their ./eval sockets took another team's
/// kernels: red team).
std::vector<cli_mount> cli_mounts(const cli_agent_options& opts,
  const fs::path& workspace, const fs::path& team_home,
  const fs::path& program) {
  std::vector<cli_mount> out{{"/", false}};
  // Temporary folders of its own: in the machine's, a CLI could plant
  // links where other teams' CLIs and later runs write (red team).
  for (const char* path : {"/tmp", "/var/tmp"})
    out.push_back({path, true, true});
  // /run holds the sockets of the machine's services (systemd, D-Bus,
  // Docker, the user's own systemd under /run/user), which need no
  // capability to connect to: through them a CLI could have a program run
  // outside every namespace (systemd-run, docker run). So an empty /run of
  // its own, with the folder of /etc/resolv.conf back where it lies there
  // (systemd-resolved's stub, resolvconf's): names must still resolve.
  out.push_back({"/run", true, true});
  if (canonical_path("/var/run") != "/run")
    out.push_back({"/var/run", true, true});
  if (auto resolv = fs::path{canonical_path("/etc/resolv.conf")};
      lies_in(resolv, "/run"))
    out.push_back({resolv.parent_path().string(), false});
  auto home = eat_home();
  if (home)
    for (auto& m : home_mounts(*home, opts.home_paths, team_home))
      out.push_back(std::move(m));
  // A hidden folder that holds eat's home (a run root of "/" or of the
  // home itself) stays visible, read-only.
  for (const auto& path : opts.hidden) {
    auto folder = canonical_path(path);
    bool needed = home && lies_in(canonical_path(*home), folder);
    out.push_back({folder, false, !needed});
  }
  for (const auto& path : opts.read_only)
    out.push_back({canonical_path(path), false});
  auto runs = runs_to_hide(opts);
  for (auto& run : runs.hidden)
    out.push_back({std::move(run), false, true});
  for (auto& path : runs.shown_again)
    out.push_back({std::move(path), false});
  // The operator's keys and other tools' logins: a red team's CLI read
  // ~/.ssh/id_* and a GitHub token.
  if (home)
    for (auto& m : hidden_home_mounts(*home, opts.hidden_home_paths))
      out.push_back(std::move(m));
  // The program itself, wherever it is (a script in the run root or in
  // /tmp, both hidden), read-only.
  out.push_back({canonical_path(program), false});
  out.push_back({canonical_path(opts.work_dir), false, true});
  out.push_back({canonical_path(workspace), true});
  return out;
}

} // namespace eat
