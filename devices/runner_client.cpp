#include "devices/runner_client.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

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

std::string tail_of(const fs::path& path, size_t bytes) {
  std::ifstream in{path, std::ios::binary | std::ios::ate};
  if (!in)
    return {};
  auto size = static_cast<size_t>(in.tellg());
  auto start = size > bytes ? size - bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

/// Returns "stderr: ...; stdout: ..." with the non-empty tails of both.
std::string output_tails(const fs::path& scratch) {
  std::string result;
  for (const char* name : {"stderr", "stdout"}) {
    auto text = tail_of(scratch / (std::string{name} + ".txt"), tail_bytes);
    if (text.empty())
      continue;
    if (!result.empty())
      result += "; ";
    result += std::string{name} + ": " + text;
  }
  return result;
}

caf::expected<void> send_request(unique_fd fd, const std::string& bytes) {
  // The whole request goes into the pipe before the runner starts, so the
  // parent never blocks on (or gets SIGPIPE from) a runner that died early.
  if (bytes.size() > 65536
      && ::fcntl(fd.get(), F_SETPIPE_SZ, static_cast<int>(bytes.size())) < 0)
    return make_error(error::runner_failed, "request too large for a pipe");
  ::fcntl(fd.get(), F_SETFL, O_NONBLOCK);
  auto n = ::write(fd.get(), bytes.data(), bytes.size());
  if (n != static_cast<ssize_t>(bytes.size()))
    return make_error(error::runner_failed, "cannot write the request");
  return {};
}

/// What collect_reply saw.
struct collected {
  std::string bytes;
  bool timed_out = false;
  bool too_large = false;
};

/// Reads fd 4 until the runner exits (or closes it and then exits), the
/// deadline passes, or the reply grows beyond reason.
collected collect_reply(
  const child_process& child, int fd, steady_time deadline) {
  collected result;
  ::fcntl(fd, F_SETFL, O_NONBLOCK);
  bool eof = false;
  char buf[65536];
  auto drain = [&] {
    for (;;) {
      auto n = ::read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR)
        continue;
      if (n == 0)
        eof = true;
      if (n <= 0)
        return;
      result.bytes.append(buf, static_cast<size_t>(n));
      if (result.bytes.size() > max_reply_bytes) {
        result.too_large = true;
        return;
      }
    }
  };
  for (;;) {
    if (eof) {
      // A grandchild could still hold fd 4; only the runner's exit counts.
      result.timed_out = !child.wait_until(deadline);
      return result;
    }
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
    if (fds[0].revents != 0)
      drain();
    if (result.too_large)
      return result;
    if (fds[1].revents != 0) {
      drain(); // whatever the runner wrote before it exited
      return result;
    }
  }
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g s", s);
  return buf;
}

} // namespace

runner_request make_runner_request(const task_spec& task, const prepared& so,
  uint64_t seed, const timing_options& timing, int core,
  double eval_timeout_s) {
  runner_request req;
  req.nonce = (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  req.kind = task.kind;
  req.dtype = task.dtype;
  req.atol = task.atol;
  req.rtol = task.rtol;
  req.matched_ratio = task.matched_ratio;
  req.max_error = task.max_error;
  req.deterministic = task.deterministic;
  req.workloads = task.workloads;
  req.reference_so = so.reference_object;
  req.baseline_so = so.baseline_object;
  req.candidate_so = so.candidate_object;
  req.seed = seed;
  req.timing = timing;
  req.core = core;
  req.limits.cpu_s = static_cast<uint64_t>(std::ceil(eval_timeout_s)) + 1;
  return req;
}

runner_outcome interpret_runner_end(bool timed_out, double timeout_s,
  const exit_status& status, const std::string& reply_bytes, uint64_t nonce,
  const std::string& output_tails) {
  runner_outcome out;
  auto fail = [&](eval_status st, std::string detail) {
    out.status = st;
    out.detail = std::move(detail);
    if (!output_tails.empty())
      out.detail += "; " + output_tails;
    return out;
  };
  if (timed_out)
    return fail(
      eval_status::timeout, "exceeded the " + seconds_text(timeout_s)
                              + " deadline; its process group was killed");
  if (!status.exited && status.signal == SIGXCPU)
    return fail(
      eval_status::timeout, "exceeded its CPU-time limit (killed by SIGXCPU)");
  if (!status.exited)
    return fail(eval_status::runtime_error, to_string(status));
  if (reply_bytes.empty())
    return fail(eval_status::runtime_error, "runner exited with status "
                                              + std::to_string(status.code)
                                              + " before reporting");
  auto reply = wire::decode<runner_reply>(reply_bytes);
  if (!reply)
    return fail(
      eval_status::runtime_error, "malformed reply: " + render(reply.error()));
  if (reply->nonce != nonce)
    return fail(eval_status::runtime_error,
      "malformed reply: it does not carry the request's nonce");
  if (status.code != 0)
    return fail(eval_status::runtime_error, "runner exited with status "
                                              + std::to_string(status.code)
                                              + " after reporting");
  out.reply = std::move(*reply);
  out.status = out.reply->status;
  out.detail = out.reply->detail;
  return out;
}

caf::expected<runner_run> run_runner_bytes(const runner_launch& launch,
  const std::string& request, uint64_t nonce, const std::string& prefix) {
  auto start = std::chrono::steady_clock::now();
  auto deadline = deadline_in(launch.timeout_s);
  auto scratch = scratch_dir::make(launch.scratch_parent, prefix);
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
  // A candidate's temporary files stay in its scratch directory, which goes
  // when the evaluation ends.
  spec.env = {"TMPDIR=" + fs::absolute(scratch->path()).string()};
  spec.env.insert(spec.env.end(), launch.env.begin(), launch.env.end());
  auto child = child_process::spawn(spec);
  if (!child)
    return make_error(error::runner_failed, render(child.error()));
  request_pipe->read.reset();
  reply_pipe->write.reset();
  auto got = collect_reply(*child, reply_pipe->read.get(), deadline);
  auto status = child->reap();
  auto tails = output_tails(scratch->path());
  runner_run run;
  run.outcome = got.too_large
                  ? runner_outcome{std::nullopt, eval_status::runtime_error,
                    "malformed reply: more than 256 MiB", 0}
                  : interpret_runner_end(got.timed_out, launch.timeout_s,
                    status, got.bytes, nonce, tails);
  run.outcome.seconds
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
        .count();
  if (run.outcome.reply)
    run.reply_bytes = std::move(got.bytes);
  return run;
}

caf::expected<runner_outcome> run_runner(
  const runner_launch& launch, const runner_request& req) {
  auto run = run_runner_bytes(launch, wire::encode(req), req.nonce, "run.");
  if (!run)
    return std::move(run.error());
  return std::move(run->outcome);
}

} // namespace eat::devices
