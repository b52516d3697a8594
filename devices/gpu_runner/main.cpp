// eat-cuda-runner / eat-hip-runner: evaluates one candidate on one GPU in a
// fresh, sandboxed process (docs/harness.md, "CUDA and HIP backends"). The
// GPU device starts it with posix_spawn: a gpu_runner_request arrives on
// fd 3, a gpu_runner_reply leaves on fd 4 (devices/gpu_runner_protocol.hpp).
// Which GPU runtime it drives is fixed at link time (make_gpu_api()).
// Exit codes as eat-runner's: 0 after a complete reply; 2 if the request
// cannot be read or decoded; 3 if the sandbox cannot be set up; 4 if the
// reply cannot be written. Failures before the reply are explained on
// stderr.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <unistd.h>

#include "actors/protocol/wire.hpp"
#include "devices/gpu_runner/gpu_harness.hpp"
#include "devices/gpu_runner/gpu_sandbox.hpp"
#include "devices/gpu_runner_protocol.hpp"

namespace {

constexpr size_t max_request_bytes = size_t{64} << 20;

[[noreturn]] void die(int code, const std::string& why) {
  std::fprintf(stderr, "eat-gpu-runner: %s\n", why.c_str());
  std::fflush(stderr);
  ::_exit(code);
}

std::string read_request() {
  std::string bytes;
  char buf[65536];
  for (;;) {
    auto n = ::read(eat::devices::runner_request_fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      die(2, std::string{"cannot read the request: "} + std::strerror(errno));
    if (n == 0)
      break;
    bytes.append(buf, static_cast<size_t>(n));
    if (bytes.size() > max_request_bytes)
      die(2, "request too large");
  }
  ::close(eat::devices::runner_request_fd);
  return bytes;
}

void write_reply(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::write(
      eat::devices::runner_reply_fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      die(4, std::string{"cannot write the reply: "} + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

} // namespace

int main() {
  ::close_range(eat::devices::runner_reply_fd + 1, ~0u, 0);
  auto req
    = eat::wire::decode<eat::devices::gpu_runner_request>(read_request());
  if (!req)
    die(2, "malformed request: " + eat::render(req.error()));
  auto sandbox = eat::devices::apply_gpu_sandbox(req->limits, req->core);
  if (!sandbox.error.empty())
    die(3, "cannot set up the sandbox: " + sandbox.error);
  auto api = eat::devices::make_gpu_api();
  auto reply = eat::devices::run_gpu_request(*api, *req);
  reply.network_isolated = sandbox.network_isolated;
  reply.core = sandbox.core;
  write_reply(eat::wire::encode(reply));
  // _exit: no destructors of kernel code or of the GPU runtime may run (or
  // write to fd 4) after the reply; the driver reclaims the context.
  ::_exit(0);
}
