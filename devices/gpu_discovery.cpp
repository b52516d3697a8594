#include "devices/gpu_discovery.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "devices/gpu_runner_protocol.hpp"
#include "devices/subprocess.hpp"
#include "devices/unique_fd.hpp"

namespace eat::devices {

namespace fs = std::filesystem;

namespace {

/// Seconds a runner may take to answer: starting the runtime on a GPU
/// that is not kept initialised costs 1 - 3 s a GPU (ECC scrubbing), ten
/// 256 MiB copies a fraction of a second.
constexpr double question_timeout_s = 120;

/// Replies are a few KiB (one entry a GPU); a pipe holds 64 KiB.
constexpr size_t max_reply_bytes = 60'000;

/// Output of a failed runner quoted in the error.
constexpr size_t quoted_output = 600;

/// Why this eat has no runner of `backend` to ask, or "".
std::string not_built(const std::string& backend) {
  if (backend == "cuda" && !EAT_HAVE_CUDA)
    return "eat was built without CUDA (nvcc was not found when it was "
           "configured; see EAT_ENABLE_CUDA)";
  if (backend == "hip" && !EAT_HAVE_HIP)
    return "eat was built without HIP (hipcc was not found when it was "
           "configured; install it with EAT_WITH_HIP=1 "
           "scripts/install-deps.sh)";
  return {};
}

std::string quoted(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  if (text.size() > quoted_output)
    text = "..." + text.substr(text.size() - quoted_output);
  return text;
}

/// Reads what the runner left in the pipe; all writers are gone.
std::string read_all(int fd) {
  std::string bytes;
  char buf[4096];
  for (;;) {
    auto n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return bytes;
    bytes.append(buf, static_cast<size_t>(n));
  }
}

/// A runner's reply, or why there is none.
struct answer {
  std::optional<gpu_service_reply> reply;
  std::string why;
};

/// Starts `runner` with `args`, its fd 4 a pipe, and decodes its reply.
answer ask(const std::string& backend, const std::string& runner,
  const std::vector<std::string>& args) {
  auto fail = [](std::string why) {
    return answer{std::nullopt, std::move(why)};
  };
  if (backend != "cuda" && backend != "hip")
    return fail("unknown GPU backend '" + backend + "'");
  if (runner.empty() || ::access(runner.c_str(), X_OK) != 0) {
    auto why = not_built(backend);
    return fail(
      why.empty() ? "no executable GPU runner at '" + runner + "'" : why);
  }
  auto pipe = make_pipe();
  if (!pipe)
    return fail("cannot make a pipe: " + render(pipe.error()));
  process_spec spec;
  spec.argv = {runner};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.fds = {{4, pipe->write.get()}};
  auto command = runner;
  for (const auto& a : args)
    command += " " + a;
  auto run = run_captured(spec, question_timeout_s, 64 << 10);
  pipe->write.reset();
  if (!run)
    return fail(command + ": " + render(run.error()));
  if (run->timed_out)
    return fail(command + ": no answer within "
                + std::to_string(static_cast<int>(question_timeout_s)) + " s");
  auto output = quoted(run->output);
  auto with_output = [&](std::string why) {
    return output.empty() ? why : why + ": " + output;
  };
  if (!run->status.exited || run->status.code != 0)
    return fail(with_output(command + " " + to_string(run->status)));
  auto bytes = read_all(pipe->read.get());
  if (bytes.size() > max_reply_bytes)
    return fail(command + ": reply too large");
  auto reply = wire::decode<gpu_service_reply>(bytes);
  if (!reply)
    return fail(with_output(command + ": " + render(reply.error())));
  if (reply->backend != backend)
    return fail(command + ": a runner for '" + reply->backend + "', not '"
                + backend + "'");
  return answer{std::move(*reply), {}};
}

} // namespace

gpu_probe_result probe_gpus(
  const std::string& backend, const std::string& runner) {
  gpu_probe_result out;
  out.built
    = (backend == "cuda" || backend == "hip") && not_built(backend).empty();
  auto a = ask(backend, runner, {"--probe"});
  if (!a.reply) {
    out.error = std::move(a.why);
    return out;
  }
  out = std::move(a.reply->probe);
  out.built = true;
  return out;
}

gpu_health check_gpu(
  const std::string& backend, const std::string& runner, int index) {
  auto a = ask(backend, runner, {"--health", std::to_string(index)});
  if (!a.reply)
    return {false, std::move(a.why)};
  return a.reply->health;
}

caf::expected<double> measure_copy_bandwidth(
  const std::string& backend, const std::string& runner, int index) {
  auto a = ask(backend, runner, {"--bandwidth", std::to_string(index)});
  if (a.reply && a.reply->error.empty() && a.reply->copy_bytes_per_s > 0)
    return a.reply->copy_bytes_per_s;
  if (a.reply && !a.reply->error.empty())
    return make_error(error::device_unavailable, a.reply->error);
  if (a.reply)
    a.why = "no figure";
  return make_error(
    error::device_unavailable, "copy bandwidth probe: " + std::move(a.why));
}

std::shared_ptr<const void> keep_initialised(
  const std::string& backend, const std::string& dev_dir) {
  if (backend != "cuda")
    return nullptr;
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<std::vector<unique_fd>>> held;
  std::lock_guard<std::mutex> guard{mutex};
  auto& shared = held[dev_dir];
  if (auto files = shared.lock())
    return files;
  auto files = std::make_shared<std::vector<unique_fd>>();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator{dev_dir, ec}) {
    auto name = entry.path().filename().string();
    auto digits
      = std::string_view{name}.substr(std::min<size_t>(6, name.size()));
    if (name.rfind("nvidia", 0) != 0 || digits.empty()
        || digits.find_first_not_of("0123456789") != std::string_view::npos)
      continue;
    unique_fd fd{::open(entry.path().c_str(), O_RDWR | O_CLOEXEC)};
    if (fd)
      files->push_back(std::move(fd));
  }
  shared = files;
  return files;
}

} // namespace eat::devices
