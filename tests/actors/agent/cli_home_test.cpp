// Specification of the teams' own homes for coding-agent CLIs
// (actors/agent/cli_home.hpp): a copy of the home_paths entries per team,
// without what the CLI could not read in place, mounted in place of eat's
// own, and login files given before an attempt and taken back when
// changed, without following what a CLI may have planted.

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "actors/agent/cli_home.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_files.hpp"

using namespace eat;
namespace fs = std::filesystem;

namespace {

using eat::test::read_text;

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream{file} << text;
}

/// Sets `file`'s modification time `seconds` from now.
void age(const fs::path& file, int seconds) {
  fs::last_write_time(
    file, fs::file_time_type::clock::now() + std::chrono::seconds{seconds});
}

/// A home with ~/.claude/ (settings, credentials, a link), ~/.claude.json
/// and a file that no home path names.
fs::path sample_home(const fs::path& root) {
  auto home = root / "home";
  write(home / ".claude" / "settings.json", "{}");
  write(home / ".claude" / ".credentials.json", "token-1");
  write(home / ".claude" / "projects" / "p" / "t.jsonl", "transcript");
  fs::create_symlink("settings.json", home / ".claude" / "link");
  write(home / ".claude.json", "{\"a\": 1}");
  write(home / ".ssh" / "id", "secret");
  return home;
}

const std::vector<std::string> paths = {".claude/", ".claude.json", ".codex/"};
const std::vector<std::string> logins = {".claude/.credentials.json"};

/// eat's home (sample_home), team t1's made from it, and the login file
/// in each.
struct two_homes {
  test::temp_dir tmp;
  fs::path home = sample_home(tmp.path());
  fs::path dir = team_home_dir(tmp.path() / "work", "t1");
  fs::path real = home / ".claude" / ".credentials.json";
  fs::path team = dir / ".claude" / ".credentials.json";

  two_homes() {
    REQUIRE(make_team_home(home, paths, dir));
  }
};

} // namespace

TEST_CASE("a team's home is a copy of the home paths that exist, links "
          "kept as links, and only its owner may enter it") {
  test::temp_dir tmp;
  auto home = sample_home(tmp.path());
  auto dir = team_home_dir(tmp.path() / "work", "t1");
  REQUIRE(make_team_home(home, paths, dir));
  CHECK(read_text(dir / ".claude" / "settings.json") == "{}");
  CHECK(
    read_text(dir / ".claude" / "projects" / "p" / "t.jsonl") == "transcript");
  CHECK(fs::is_symlink(dir / ".claude" / "link"));
  CHECK(fs::read_symlink(dir / ".claude" / "link") == "settings.json");
  CHECK(read_text(dir / ".claude.json") == "{\"a\": 1}");
  CHECK_FALSE(fs::exists(dir / ".codex"));
  CHECK_FALSE(fs::exists(dir / ".ssh"));
  struct stat st;
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  // Made once: later attempts find what the team's CLIs left.
  write(dir / ".claude" / "settings.json", "{\"hooks\": 1}");
  REQUIRE(make_team_home(home, paths, dir));
  CHECK(read_text(dir / ".claude" / "settings.json") == "{\"hooks\": 1}");
  CHECK(read_text(home / ".claude" / "settings.json") == "{}");
  // Nothing is left beside it.
  for (const auto& e : fs::directory_iterator{dir.parent_path()})
    CHECK(e.path() == dir);
}

TEST_CASE("a home path that is a link into another folder is copied, not "
          "linked: the team's CLI cannot write through it") {
  test::temp_dir tmp;
  auto home = tmp.path() / "home";
  write(tmp.path() / "dotfiles" / "claude" / "settings.json", "{}");
  fs::create_directories(home);
  fs::create_symlink(tmp.path() / "dotfiles" / "claude", home / ".claude");
  auto dir = team_home_dir(tmp.path() / "work", "t1");
  REQUIRE(make_team_home(home, paths, dir));
  CHECK_FALSE(fs::is_symlink(dir / ".claude"));
  CHECK(read_text(dir / ".claude" / "settings.json") == "{}");
  auto mounts = home_mounts(home, paths, dir);
  REQUIRE(mounts.size() == 1);
  // Mounted where the kernel looks: the link's target.
  CHECK(mounts[0].path
        == fs::canonical(tmp.path() / "dotfiles" / "claude").string());
  CHECK(mounts[0].source == (dir / ".claude").string());
  CHECK(mounts[0].writable);
}

TEST_CASE("the home mounts name each entry both homes have, the team's "
          "copy as the source") {
  test::temp_dir tmp;
  auto home = sample_home(tmp.path());
  auto dir = team_home_dir(tmp.path() / "work", "t1");
  REQUIRE(make_team_home(home, paths, dir));
  auto mounts = home_mounts(home, paths, dir);
  REQUIRE(mounts.size() == 2);
  CHECK(mounts[0].path == fs::canonical(home / ".claude").string());
  CHECK(mounts[0].source == (dir / ".claude").string());
  CHECK(mounts[1].path == fs::canonical(home / ".claude.json").string());
  CHECK(mounts[1].source == (dir / ".claude.json").string());
}

TEST_CASE("a team gets eat's login before each attempt, and eat takes back "
          "a login the team's CLI refreshed during it") {
  two_homes h;
  const auto &home = h.home, &dir = h.dir, &real = h.real, &team = h.team;
  fs::permissions(real, fs::perms::owner_read | fs::perms::owner_write);
  SECTION("the CLI refreshed it") {
    write(team, "stale");
    CHECK(give_credentials(home, dir, logins).empty());
    CHECK(read_text(team) == "token-1");
    write(team, "token-2");
    CHECK(take_credentials(home, dir, logins).empty());
    CHECK(read_text(real) == "token-2");
    CHECK(fs::status(real).permissions()
          == (fs::perms::owner_read | fs::perms::owner_write));
  }
  SECTION("the CLI left it, and eat's was refreshed meanwhile") {
    CHECK(give_credentials(home, dir, logins).empty());
    write(real, "token-3");
    CHECK(take_credentials(home, dir, logins).empty());
    CHECK(read_text(real) == "token-3");
    CHECK(give_credentials(home, dir, logins).empty());
    CHECK(read_text(team) == "token-3");
  }
  SECTION("a stale login dated in the future is replaced at the next "
          "attempt, and never taken back") {
    // A red team's CLI dated its stale token 2099: when the newer file won,
    // it overwrote every later refresh for the rest of the run.
    CHECK(give_credentials(home, dir, logins).empty());
    write(team, "token-2");
    age(team, 3600 * 24 * 365);
    CHECK(take_credentials(home, dir, logins).empty());
    write(real, "token-3");
    CHECK(give_credentials(home, dir, logins).empty());
    CHECK(read_text(team) == "token-3");
    CHECK(take_credentials(home, dir, logins).empty());
    CHECK(read_text(real) == "token-3");
  }
  SECTION("the team's is missing") {
    fs::remove(team);
    CHECK(give_credentials(home, dir, logins).empty());
    CHECK(read_text(team) == "token-1");
  }
  SECTION("eat's is missing: none is made there") {
    fs::remove(real);
    CHECK(give_credentials(home, dir, logins).empty());
    write(team, "token-4");
    CHECK(take_credentials(home, dir, logins).empty());
    CHECK_FALSE(fs::exists(real));
  }
}

TEST_CASE("a login taken back keeps the owner and mode of the file it "
          "replaces") {
  if (::geteuid() != 0) {
    WARN("not root: no file of another user's to replace");
    return;
  }
  two_homes h;
  // A red team's root eat left a user's login root's.
  REQUIRE(::chown(h.real.c_str(), 65534, 65534) == 0);
  fs::permissions(h.real, fs::perms::owner_read | fs::perms::owner_write);
  CHECK(give_credentials(h.home, h.dir, logins).empty());
  write(h.team, "token-2");
  CHECK(take_credentials(h.home, h.dir, logins).empty());
  CHECK(read_text(h.real) == "token-2");
  struct stat st;
  REQUIRE(::stat(h.real.c_str(), &st) == 0);
  CHECK(st.st_uid == 65534);
  CHECK(st.st_gid == 65534);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("a login file the team's CLI replaced with a link or a huge file "
          "is left alone, and what it points at is never read") {
  two_homes h;
  const auto &home = h.home, &dir = h.dir, &real = h.real, &team = h.team;
  CHECK(give_credentials(home, dir, logins).empty());
  SECTION("a link to a secret file") {
    fs::remove(team);
    fs::create_symlink(home / ".ssh" / "id", team);
    auto why = take_credentials(home, dir, logins);
    CHECK_THAT(why, Catch::Contains(team.string() + ": not a regular file"));
    CHECK(read_text(real) == "token-1");
    CHECK_THAT(give_credentials(home, dir, logins),
      Catch::Contains(team.string() + ": not a regular file"));
    CHECK(read_text(home / ".ssh" / "id") == "secret");
  }
  SECTION("a link in place of its folder") {
    fs::remove_all(dir / ".claude");
    fs::create_symlink(home / ".ssh", dir / ".claude");
    write(home / ".ssh" / ".credentials.json", "planted");
    CHECK(take_credentials(home, dir, logins).empty());
    CHECK(read_text(real) == "token-1");
    CHECK(give_credentials(home, dir, logins).empty());
    CHECK(read_text(home / ".ssh" / ".credentials.json") == "planted");
  }
  SECTION("a file over 1 MiB") {
    write(team, std::string(max_credentials_bytes + 1, 'x'));
    CHECK_THAT(take_credentials(home, dir, logins),
      Catch::Contains("not a regular file of at most 1 MiB"));
    CHECK(read_text(real) == "token-1");
  }
}

TEST_CASE("what a CLI could not read in eat's home is not copied into its "
          "team's, where it could chmod it") {
  test::temp_dir tmp;
  auto home = sample_home(tmp.path());
  write(home / ".claude" / "locked", "locked");
  fs::permissions(home / ".claude" / "locked", fs::perms::none);
  if (::geteuid() == 0) {
    write(home / ".claude" / "theirs", "theirs");
    fs::permissions(home / ".claude" / "theirs",
      fs::perms::owner_read | fs::perms::owner_write);
    REQUIRE(::chown((home / ".claude" / "theirs").c_str(), 65534, 65534) == 0);
    write(home / ".claude" / "shared", "shared");
    REQUIRE(::chown((home / ".claude" / "shared").c_str(), 65534, 65534) == 0);
  }
  auto dir = team_home_dir(tmp.path() / "work", "t1");
  REQUIRE(make_team_home(home, paths, dir));
  CHECK_FALSE(fs::exists(dir / ".claude" / "locked"));
  CHECK(read_text(dir / ".claude" / "settings.json") == "{}");
  if (::geteuid() == 0) {
    CHECK_FALSE(fs::exists(dir / ".claude" / "theirs"));
    // Readable by all: copied, with its owner.
    struct stat st;
    REQUIRE(::stat((dir / ".claude" / "shared").c_str(), &st) == 0);
    CHECK(st.st_uid == 65534);
  }
}

TEST_CASE("a file with an access ACL is not copied into a team's home, "
          "which would not keep the ACL") {
  // A red team's CLI read a file its ACL closed to eat's user, whose mode
  // bits said others may read it, in its team's copy.
  test::temp_dir tmp;
  auto home = sample_home(tmp.path());
  auto file = home / ".claude" / "acl";
  write(file, "closed");
  // POSIX ACL, version 2: user::rw-, user:65534:r--, group::---,
  // mask::r--, other::r-- (entries: tag u16, perm u16, id u32).
  const unsigned char acl[] = {2, 0, 0, 0, 1, 0, 6, 0, 255, 255, 255, 255, 2, 0,
    4, 0, 254, 255, 0, 0, 4, 0, 0, 0, 255, 255, 255, 255, 16, 0, 4, 0, 255, 255,
    255, 255, 32, 0, 4, 0, 255, 255, 255, 255};
  if (::setxattr(file.c_str(), "system.posix_acl_access", acl, sizeof(acl), 0)
      != 0) {
    WARN("this file system keeps no ACLs: " << std::strerror(errno));
    return;
  }
  auto dir = team_home_dir(tmp.path() / "work", "t1");
  REQUIRE(make_team_home(home, paths, dir));
  CHECK_FALSE(fs::exists(dir / ".claude" / "acl"));
  CHECK(read_text(dir / ".claude" / "settings.json") == "{}");
}
