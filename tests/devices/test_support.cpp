#include "tests/devices/test_support.hpp"

#include <cerrno>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "devices/cpu_device.hpp"
#include "devices/runner/checks.hpp"

namespace eat::devices::test {

std::string read_source(const std::string& relative) {
  return read_text(std::filesystem::path{EAT_SOURCE_DIR} / relative);
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    throw std::runtime_error("cannot read " + path.string());
  return std::string{std::istreambuf_iterator<char>{in}, {}};
}

workload gemm_workload(int64_t m, int64_t n, int64_t k) {
  workload w;
  w.name = "m" + std::to_string(m) + "_n" + std::to_string(n) + "_k"
           + std::to_string(k);
  w.axes = {{"m", m}, {"n", n}, {"k", k}};
  return w;
}

task_spec sgemm_task(std::vector<workload> workloads) {
  task_spec task;
  task.name = "sgemm";
  task.kind = "gemm";
  task.dtype = "float32";
  task.atol = 1e-4;
  task.rtol = 1e-4;
  task.workloads = workloads.empty()
                     ? std::vector<workload>{gemm_workload(37, 23, 29),
                       gemm_workload(48, 48, 48)}
                     : std::move(workloads);
  task.reference_source = read_source("kernels/sgemm/reference.cpp");
  task.baseline_source = read_source("kernels/sgemm/baseline.cpp");
  return task;
}

std::string render_template(const std::string& relative,
  const std::vector<std::pair<std::string, std::string>>& params) {
  auto text = read_source(relative);
  for (const auto& [key, value] : params) {
    auto placeholder = "{{" + key + "}}";
    for (auto pos = text.find(placeholder); pos != std::string::npos;
         pos = text.find(placeholder, pos + value.size()))
      text.replace(pos, placeholder.size(), value);
  }
  return text;
}

std::string tiled_source(
  const std::string& order, int tile_m, int tile_n, int tile_k) {
  return render_template("kernels/sgemm/tiled.cpp.in",
    {{"loop_order", order}, {"tile_m", std::to_string(tile_m)},
      {"tile_n", std::to_string(tile_n)}, {"tile_k", std::to_string(tile_k)}});
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

candidate make_candidate(std::string id, std::string source) {
  candidate c;
  c.id = std::move(id);
  c.team = "t1";
  c.agent = "a1";
  c.task = "sgemm";
  c.family = "custom";
  c.source = std::move(source);
  return c;
}

scratch_dir make_temp_dir() {
  auto dir = scratch_dir::make(
    std::filesystem::temp_directory_path(), "eat-devices-test.");
  REQUIRE(dir);
  return std::move(*dir);
}

std::string in_child(const std::function<std::string()>& body, int reply_fd) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(fds[0]);
    int out = fds[1];
    if (reply_fd >= 0 && reply_fd != out) {
      if (::dup2(out, reply_fd) != reply_fd)
        ::_exit(1);
      ::close(out);
      out = reply_fd;
    }
    std::string said = body();
    (void)!::write(out, said.data(), said.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string heard;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) != 0;)
    if (n > 0)
      heard.append(buf, static_cast<size_t>(n));
    else if (errno != EINTR)
      break;
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR)
    ; // retry
  CHECK(WIFEXITED(status));
  return heard;
}

bool become_user(uid_t uid) {
  if (::geteuid() != 0)
    return true;
  return ::setgroups(0, nullptr) == 0 && ::setresgid(uid, uid, uid) == 0
         && ::setresuid(uid, uid, uid) == 0 && ::prctl(PR_SET_DUMPABLE, 1) == 0;
}

bool user_namespaces_allowed(uid_t uid) {
  return in_child([&]() -> std::string {
    if (!become_user(uid))
      return "cannot switch users";
    // Read before: in the namespace, unmapped, it is the overflow id.
    auto id = std::to_string(::getuid());
    if (::unshare(CLONE_NEWUSER) != 0)
      return "refused";
    // Under AppArmor's restriction the namespace is made and its maps are
    // refused (devices/runner/user_namespace.cpp).
    auto line = id + " " + id + " 1\n";
    int map = ::open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
    bool mapped = map >= 0
                  && ::write(map, line.data(), line.size())
                       == static_cast<ssize_t>(line.size());
    if (map >= 0)
      ::close(map);
    return mapped ? "" : "maps refused";
  }) == "";
}

uid_t unused_uid(uid_t from) {
  while (::getpwuid(from) != nullptr)
    ++from;
  return from;
}

void spin_for_cpu(int64_t ns) {
  for (auto start = thread_cpu_ns(); thread_cpu_ns() - start < ns;)
    ; // spin
}

std::vector<pid_t> fork_sleepers(int most) {
  std::vector<pid_t> children;
  for (int i = 0; i < most; ++i) {
    pid_t child = ::fork();
    if (child == 0) {
      ::alarm(60);
      for (;;)
        ::pause();
    }
    if (child < 0)
      break;
    children.push_back(child);
  }
  return children;
}

void end_sleepers(const std::vector<pid_t>& children) {
  for (auto child : children) {
    ::kill(child, SIGKILL);
    while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR)
      ; // retry
  }
}

std::filesystem::path kernel_writable_file(
  const scratch_dir& dir, const std::string& name) {
  namespace fs = std::filesystem;
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read
                                | fs::perms::group_exec | fs::perms::others_read
                                | fs::perms::others_exec);
  auto file = dir.path() / name;
  std::ofstream{file}.flush();
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write
                          | fs::perms::group_read | fs::perms::group_write
                          | fs::perms::others_read | fs::perms::others_write);
  return file;
}

cpu_options fast_options(const scratch_dir& work_dir) {
  cpu_options opts;
  opts.runner_path = EAT_RUNNER_PATH;
  opts.work_dir = work_dir.path().string();
  opts.eval_timeout_s = 60;
  opts.timing.warmup = 1;
  opts.timing.min_samples = 3;
  opts.timing.min_time_s = 0.01;
  opts.timing.max_time_s = 0.2;
  opts.timing.check_seeds = 2;
  // Peaks far above any machine's: the speed-of-light gate stays out of the
  // way of tests about other things. Measured peaks depend on the load of
  // the machine, and a fast kernel on a tiny workload measured against the
  // peaks of a busy core was rejected as faster than light. The gate's own
  // tests (speed_of_light_test.cpp, the hostile suite) set theirs.
  opts.peak_flops_override = 1e15;
  opts.peak_bw_override = 1e15;
  return opts;
}

eval_result evaluate_rounds(
  const std::string& source, const workload& w, uint32_t min_rounds) {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.kernel_processes = true;
  opts.timing.min_samples = min_rounds;
  opts.timing.max_time_s = 30;
  opts.timing.min_time_s = 0;
  auto dev = make_device(opts);
  return dev->evaluate(sgemm_task({w}), make_candidate("c", source), 11);
}

std::unique_ptr<device> make_device(const cpu_options& opts) {
  auto dev = make_cpu_device("cpu0", opts);
  if (!dev)
    FAIL("cannot make the CPU device: " << render(dev.error()));
  return std::move(*dev);
}

std::string naive_kernel(const std::string& prologue,
  const std::string& epilogue, const std::string& includes) {
  return "#include <cstdint>\n" + includes + R"(
extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
)" + prologue
         + R"(
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
)" + epilogue
         + "\n}\n";
}

bool process_gone(int pid) {
  std::ifstream stat{"/proc/" + std::to_string(pid) + "/stat"};
  std::string text;
  if (!std::getline(stat, text))
    return true;
  // "pid (comm) S ...": the state follows the last parenthesis.
  auto at = text.rfind(')');
  return at != std::string::npos && at + 2 < text.size() && text[at + 2] == 'Z';
}

} // namespace eat::devices::test
