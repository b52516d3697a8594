// Specification of root's privileges dropped before kernel code runs
// (devices/runner/drop_root.hpp, [devices.cpu] run_as). The first cases
// call drop_root in a forked stand-in for the runner's worker, which
// reports what it saw on a pipe; the others run kernels through the CPU
// device. Switching users needs root (as in CI); elsewhere a case says so
// and ends.

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "devices/cpu_device.hpp"
#include "devices/runner/drop_root.hpp"
#include "devices/runner/sandbox.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace fs = std::filesystem;

namespace {

/// "nobody"'s user and group ids.
struct ids {
  uid_t uid = 0;
  gid_t gid = 0;
};

ids nobody() {
  const passwd* entry = ::getpwnam("nobody");
  REQUIRE(entry != nullptr);
  return {entry->pw_uid, entry->pw_gid};
}

/// True (with a warning) where this process cannot switch users.
bool not_root() {
  if (::geteuid() == 0)
    return false;
  WARN("not root (uid " << ::geteuid() << "): no user to switch from");
  return true;
}

/// Runs `body` in a forked stand-in that enters `cwd` first.
std::string in_child(
  const fs::path& cwd, const std::function<std::string()>& body) {
  return eat::devices::test::in_child([&]() -> std::string {
    return ::chdir(cwd.c_str()) == 0 ? body() : "chdir failed";
  });
}

/// A file only root may read, in a directory only root may enter.
fs::path root_only_file(const scratch_dir& dir, const std::string& text) {
  auto inner = dir.path() / "private";
  fs::create_directory(inner);
  fs::permissions(inner, fs::perms::owner_all);
  auto file = inner / "object.so";
  std::ofstream{file} << text;
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  return file;
}

std::string read_all(const std::string& path) {
  std::ifstream in{path};
  return {std::istreambuf_iterator<char>{in}, {}};
}

/// A kernel that, on its first call, writes its real user id to `uid_file`
/// and tries to make `forbidden`.
std::string user_probe(const fs::path& uid_file, const fs::path& forbidden) {
  return naive_kernel("static bool done = false;\n"
                      "if (!done) {\n"
                      "  done = true;\n"
                      "  std::ofstream{\""
                        + uid_file.string()
                        + "\"} << ::getuid();\n"
                          "  int fd = ::open(\""
                        + forbidden.string()
                        + "\", O_WRONLY | O_CREAT, 0644);\n"
                          "  if (fd >= 0) ::close(fd);\n"
                          "}",
    "", "#include <fcntl.h>\n#include <fstream>\n#include <unistd.h>\n");
}

} // namespace

TEST_CASE("drop_root switches a root worker's user and group ids for good, "
          "gives it its scratch directory, keeps its code readable and its "
          "parent-death signal") {
  if (not_root())
    return;
  auto who = nobody();
  auto dir = make_temp_dir();
  auto code = root_only_file(dir, "the object's bytes");
  auto scratch = make_temp_dir(); // mkdtemp: 0700, root's
  auto said = in_child(scratch.path(), [&]() -> std::string {
    std::string path = code.string();
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (auto why = drop_root(who.uid, who.gid, {&path}); !why.empty())
      return "drop_root: " + why;
    uid_t r, e, s;
    gid_t gr, ge, gs;
    ::getresuid(&r, &e, &s);
    ::getresgid(&gr, &ge, &gs);
    if (r != who.uid || e != who.uid || s != who.uid)
      return "user ids " + std::to_string(r) + " " + std::to_string(e) + " "
             + std::to_string(s);
    if (gr != who.gid || ge != who.gid || gs != who.gid)
      return "group ids " + std::to_string(gr);
    if (::getgroups(0, nullptr) != 0)
      return "supplementary groups left";
    int death_signal = 0;
    if (::prctl(PR_GET_PDEATHSIG, &death_signal) != 0
        || death_signal != SIGKILL)
      return "parent-death signal " + std::to_string(death_signal);
    if (::setuid(0) == 0)
      return "setuid(0) worked";
    if (::open(code.c_str(), O_RDONLY) >= 0)
      return "the object opens by its own path";
    if (path.rfind(code_fd_prefix, 0) != 0)
      return "path not rewritten: " + path;
    if (read_all(path) != "the object's bytes")
      return "the object does not read through " + path;
    struct stat st;
    if (::stat(".", &st) != 0 || st.st_uid != who.uid)
      return "the scratch directory is not the user's";
    return "";
  });
  CHECK(said == "");
}

TEST_CASE("after drop_root, RLIMIT_NPROC set from user_task_count caps the "
          "user's tasks without any cgroup, as the sandbox sets it") {
  if (not_root())
    return;
  // A user id of no account and no process, so that no other test's
  // kernels (run as nobody, perhaps at this moment) change the count.
  auto unused = unused_uid(54'321);
  auto scratch = make_temp_dir();
  auto said = in_child(scratch.path(), [&]() -> std::string {
    if (auto why = drop_root(unused, unused, {}); !why.empty())
      return "drop_root: " + why;
    // This process only, non-dumpable since the switch (its /proc
    // directory is root's; the count must read its real user id).
    auto tasks = user_task_count();
    if (tasks != 1)
      return "user_task_count " + std::to_string(tasks);
    rlimit cap{tasks + 3, tasks + 3};
    if (::setrlimit(RLIMIT_NPROC, &cap) != 0)
      return "setrlimit failed";
    auto children = fork_sleepers(10);
    auto counted = user_task_count();
    end_sleepers(children);
    if (children.size() != 3 || counted != 4)
      return "forked " + std::to_string(children.size()) + ", counted "
             + std::to_string(counted);
    return "";
  });
  CHECK(said == "");
}

TEST_CASE("switch_kernel_user, the GPU runners' late switch, sets "
          "RLIMIT_NPROC again from the new user's tasks") {
  if (not_root())
    return;
  auto unused = unused_uid(54'323);
  auto scratch = make_temp_dir();
  auto said = in_child(scratch.path(), [&]() -> std::string {
    // As apply_sandbox left it for root: root's count + 3, which binds
    // nobody once the count is another user's.
    // One count for both limits: root's tasks come and go with the other
    // tests', and a soft limit above the hard one fails.
    auto roots_tasks = user_task_count();
    rlimit roots{roots_tasks + 3, roots_tasks + 3};
    if (::setrlimit(RLIMIT_NPROC, &roots) != 0)
      return "setrlimit failed";
    runner_limits limits;
    limits.run_as_uid = unused;
    limits.run_as_gid = unused;
    limits.extra_tasks = 3;
    if (auto why = switch_kernel_user(limits, {}); !why.empty())
      return "switch_kernel_user: " + why;
    if (::getuid() != unused)
      return "still uid " + std::to_string(::getuid());
    auto children = fork_sleepers(10);
    end_sleepers(children);
    // This process and 3 more.
    if (children.size() != 3)
      return "forked " + std::to_string(children.size());
    return "";
  });
  CHECK(said == "");
}

TEST_CASE("drop_root refuses a working directory that is not private to "
          "root, and stays root") {
  if (not_root())
    return;
  auto who = nobody();
  auto open_dir = make_temp_dir();
  fs::permissions(open_dir.path(),
    fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  auto said = in_child(open_dir.path(), [&]() -> std::string {
    auto why = drop_root(who.uid, who.gid, {});
    return why + (::getuid() == 0 ? "; still root" : "; switched");
  });
  CHECK(said
        == "the working directory is not a scratch directory private to "
           "root; still root");
}

TEST_CASE("drop_root that cannot copy an object changes no path, leaves no "
          "copy open and stays root") {
  if (not_root())
    return;
  auto who = nobody();
  auto dir = make_temp_dir();
  auto code = root_only_file(dir, "the object's bytes");
  auto scratch = make_temp_dir();
  auto said = in_child(scratch.path(), [&]() -> std::string {
    std::string first = code.string();
    std::string missing = (dir.path() / "missing.so").string();
    auto why = drop_root(who.uid, who.gid, {&first, &missing});
    if (why.find("cannot copy " + missing + " to memory") != 0)
      return "error: " + why;
    if (first != code.string() || missing != (dir.path() / "missing.so"))
      return "paths changed: " + first + ", " + missing;
    std::error_code ec;
    for (const auto& fd : fs::directory_iterator{"/proc/self/fd", ec})
      if (fs::read_symlink(fd.path(), ec).string().find("eat-code")
          != std::string::npos)
        return "a copy is still open: " + fd.path().string();
    return ::getuid() == 0 ? "" : "switched";
  });
  CHECK(said == "");
}

TEST_CASE("drop_root does nothing without a user to switch to") {
  std::string path = "/some/object.so";
  CHECK(drop_root(-1, -1, {&path}) == "");
  CHECK(drop_root(0, 0, {&path}) == "");
  CHECK(path == "/some/object.so");
}

TEST_CASE("close_code_fd closes only a descriptor that drop_root named") {
  int null_fd = ::open("/dev/null", O_RDONLY);
  REQUIRE(null_fd >= 0);
  // Above the runner's pipes (3 and 4), as drop_root's descriptors are.
  int fd = ::fcntl(null_fd, F_DUPFD, 10);
  ::close(null_fd);
  REQUIRE(fd >= 10);
  auto name = std::to_string(fd);
  close_code_fd("/dev/fd/" + name);
  close_code_fd(code_fd_prefix + name + "x");
  CHECK(::fcntl(fd, F_GETFD) >= 0);
  close_code_fd(code_fd_prefix + name);
  CHECK(::fcntl(fd, F_GETFD) < 0);
}

TEST_CASE("run by root, a kernel runs as [devices.cpu] run_as and cannot "
          "make files in root's directories") {
  if (not_root())
    return;
  auto dir = make_temp_dir();
  auto uid_file = kernel_writable_file(dir, "uid");
  auto forbidden = dir.path() / "forbidden";
  auto dev = make_device(fast_options(dir));
  auto result = dev->evaluate(sgemm_task({gemm_workload(8, 8, 8)}),
    make_candidate("probe", user_probe(uid_file, forbidden)), 1);
  INFO(result.detail << "; " << result.method);
  CHECK(result.status == eval_status::passed);
  auto uid = std::to_string(nobody().uid);
  CHECK(read_all(uid_file) == uid);
  CHECK(contains(result.method, "kernel code run as uid " + uid));
  CHECK_FALSE(fs::exists(forbidden));
}

TEST_CASE("with run_as empty, a root runner's kernel keeps root") {
  if (not_root())
    return;
  auto dir = make_temp_dir();
  auto uid_file = kernel_writable_file(dir, "uid");
  auto made = dir.path() / "made";
  auto opts = fast_options(dir);
  opts.run_as = "";
  auto dev = make_device(opts);
  auto result = dev->evaluate(sgemm_task({gemm_workload(8, 8, 8)}),
    make_candidate("probe", user_probe(uid_file, made)), 1);
  INFO(result.detail << "; " << result.method);
  CHECK(result.status == eval_status::passed);
  CHECK(read_all(uid_file) == "0");
  CHECK(contains(result.method, "kernel code run as root"));
  CHECK(fs::exists(made));
}

TEST_CASE("a run_as user the machine does not have fails when the device "
          "is made") {
  if (not_root())
    return;
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.run_as = "no-such-user-of-eat";
  auto dev = make_cpu_device("cpu0", opts);
  REQUIRE_FALSE(dev);
  CHECK(contains(render(dev.error()),
    "cpu device cpu0: run_as: no user \"no-such-user-of-eat\" on this "
    "machine"));
}

TEST_CASE("a kernel finds no descriptor of the shared objects the runner "
          "loaded") {
  // Through one it could load a second, unlocked copy of the reference.
  auto dir = make_temp_dir();
  auto found = kernel_writable_file(dir, "found");
  auto source = naive_kernel(
    "static bool done = false;\n"
    "if (!done) {\n"
    "  done = true;\n"
    "  std::ofstream out{\""
      + found.string()
      + "\"};\n"
        "  for (const auto& fd : std::filesystem::directory_iterator{"
        "\"/proc/self/fd\"}) {\n"
        "    std::error_code ec;\n"
        "    auto target = std::filesystem::read_symlink(fd.path(), ec);\n"
        "    if (target.extension() == \".so\"\n"
        "        || target.string().find(\"memfd:\") != std::string::npos)\n"
        "      out << target << '\\n';\n"
        "  }\n"
        "}",
    "", "#include <filesystem>\n#include <fstream>\n");
  auto dev = make_device(fast_options(dir));
  auto result = dev->evaluate(
    sgemm_task({gemm_workload(8, 8, 8)}), make_candidate("fds", source), 1);
  INFO(result.detail);
  CHECK(result.status == eval_status::passed);
  CHECK(fs::exists(found));
  CHECK(read_all(found) == "");
}
