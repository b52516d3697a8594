#include "devices/gpu_runner_client.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "actors/protocol/wire.hpp"
#include "devices/scratch_dir.hpp"

namespace eat::devices {

namespace fs = std::filesystem;

namespace {

/// Replies are at most a few MiB (100k sample pairs per workload).
constexpr size_t max_reply_bytes = size_t{256} << 20;

/// Bytes of the runner's stderr and stdout quoted in a detail.
constexpr size_t tail_bytes = 1024;

std::string tail_of(const fs::path& path) {
  std::ifstream in{path, std::ios::binary | std::ios::ate};
  if (!in)
    return {};
  auto size = static_cast<size_t>(in.tellg());
  auto start = size > tail_bytes ? size - tail_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

std::string output_tails(const fs::path& scratch) {
  std::string result;
  for (const char* name : {"stderr", "stdout"}) {
    auto text = tail_of(scratch / (std::string{name} + ".txt"));
    if (text.empty())
      continue;
    result += (result.empty() ? "" : "; ") + std::string{name} + ": " + text;
  }
  return result;
}

caf::expected<void> send_request(unique_fd fd, const std::string& bytes) {
  // All of it goes into the pipe before the runner starts (see
  // runner_client.cpp): the parent never blocks on a runner that died.
  if (bytes.size() > 65536
      && ::fcntl(fd.get(), F_SETPIPE_SZ, static_cast<int>(bytes.size())) < 0)
    return make_error(error::runner_failed, "request too large for a pipe");
  ::fcntl(fd.get(), F_SETFL, O_NONBLOCK);
  auto n = ::write(fd.get(), bytes.data(), bytes.size());
  if (n != static_cast<ssize_t>(bytes.size()))
    return make_error(error::runner_failed, "cannot write the request");
  return {};
}

struct collected {
  std::string bytes;
  bool timed_out = false;
  bool too_large = false;
};

/// Appends what `fd` has now; returns false at end of file.
bool drain(int fd, collected& into) {
  char buf[65536];
  for (;;) {
    auto n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0)
      return false;
    if (n < 0)
      return true;
    into.bytes.append(buf, static_cast<size_t>(n));
    if (into.bytes.size() > max_reply_bytes) {
      into.too_large = true;
      return true;
    }
  }
}

/// Reads fd 4 until the runner exits, the deadline passes, or the reply
/// grows beyond reason.
collected collect_reply(
  const child_process& child, int fd, steady_time deadline) {
  collected result;
  ::fcntl(fd, F_SETFL, O_NONBLOCK);
  for (;;) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {child.exit_fd(), POLLIN, 0}};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) {
      result.timed_out = true;
      return result;
    }
    auto rc = ::poll(
      fds, 2, static_cast<int>(std::min<int64_t>(left.count() + 1, 60'000)));
    if (rc < 0 && errno != EINTR) {
      result.timed_out = !child.wait_until(deadline);
      return result;
    }
    bool open = fds[0].revents == 0 || drain(fd, result);
    if (result.too_large)
      return result;
    if (fds[1].revents != 0) {
      drain(fd, result);
      return result;
    }
    if (!open) {
      // A grandchild could still hold fd 4; only the runner's exit counts.
      result.timed_out = !child.wait_until(deadline);
      return result;
    }
  }
}

} // namespace

caf::expected<gpu_runner_outcome> run_gpu_runner_bytes(
  const runner_launch& launch, const std::string& request, uint64_t nonce) {
  auto start = std::chrono::steady_clock::now();
  auto deadline = deadline_in(launch.timeout_s);
  auto scratch = scratch_dir::make(launch.scratch_parent, "gpu-run.");
  if (!scratch)
    return std::move(scratch.error());
  auto request_pipe = make_pipe();
  auto reply_pipe = make_pipe();
  if (!request_pipe || !reply_pipe)
    return make_error(error::runner_failed, "cannot open the runner's pipes");
  if (auto sent = send_request(std::move(request_pipe->write), request); !sent)
    return std::move(sent.error());
  process_spec spec;
  spec.argv = {launch.runner_path};
  spec.cwd = scratch->path().string();
  spec.fds = {{runner_request_fd, request_pipe->read.get()},
    {runner_reply_fd, reply_pipe->write.get()}};
  spec.files = {{1, (scratch->path() / "stdout.txt").string()},
    {2, (scratch->path() / "stderr.txt").string()}};
  auto child = child_process::spawn(spec);
  if (!child)
    return make_error(error::runner_failed, render(child.error()));
  request_pipe->read.reset();
  reply_pipe->write.reset();
  auto got = collect_reply(*child, reply_pipe->read.get(), deadline);
  auto status = child->reap();
  gpu_runner_outcome out;
  if (got.too_large)
    out.common = runner_outcome{std::nullopt, eval_status::runtime_error,
      "malformed reply: more than 256 MiB", 0};
  else
    out.common = interpret_runner_end(got.timed_out, launch.timeout_s, status,
      got.bytes, nonce, output_tails(scratch->path()));
  if (out.common.reply) {
    auto full = wire::decode<gpu_runner_reply>(got.bytes);
    if (full)
      out.reply = std::move(*full);
    else
      out.common = runner_outcome{std::nullopt, eval_status::runtime_error,
        "malformed reply: " + render(full.error()), 0};
  }
  out.common.seconds
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
        .count();
  return out;
}

caf::expected<gpu_runner_outcome> run_gpu_runner(
  const runner_launch& launch, const gpu_runner_request& req) {
  return run_gpu_runner_bytes(launch, wire::encode(req), req.nonce);
}

} // namespace eat::devices
