// eat-cuda-runner / eat-hip-runner: evaluates one candidate on one GPU in a
// fresh, sandboxed process (docs/harness.md, "CUDA and HIP backends"). The
// GPU device starts it with posix_spawn: a gpu_runner_request arrives on
// fd 3, a gpu_runner_reply leaves on fd 4 (devices/gpu_runner_protocol.hpp).
// Which GPU runtime it drives is fixed at link time (make_gpu_api()).
// Exit codes as eat-runner's: 0 after a complete reply; 2 if the request
// cannot be read or decoded; 3 if the sandbox cannot be set up; 4 if the
// reply cannot be written. Failures before the reply are explained on
// stderr. With an option (--probe, --health INDEX, --bandwidth INDEX) it
// answers a question about the GPUs instead, unsandboxed since it runs
// no kernel code but its own (devices/gpu_runner/gpu_service.hpp).

#include <unistd.h>

#include "actors/protocol/wire.hpp"
#include "devices/gpu_runner/gpu_harness.hpp"
#include "devices/gpu_runner/gpu_service.hpp"
#include "devices/gpu_runner_protocol.hpp"
#include "devices/runner/orphans.hpp"
#include "devices/runner/runner_pipes.hpp"
#include "devices/runner/sandbox.hpp"

int main(int argc, char** argv) {
  using namespace eat::devices;
  constexpr const char* program = "eat-gpu-runner";
  keep_only_protocol_fds();
  if (is_gpu_service_call(argc)) {
    auto api = make_gpu_api();
    ::_exit(serve_gpu_question(*api, argc, argv));
  }
  auto req = eat::wire::decode<gpu_runner_request>(read_request_bytes(program));
  if (!req)
    runner_exit(program, 2, "malformed request: " + eat::render(req.error()));
  auto sandbox = apply_sandbox(req->limits, req->core, sandboxed::gpu_runner);
  if (!sandbox.error.empty())
    runner_exit(program, 3, "cannot set up the sandbox: " + sandbox.error);
  auto api = make_gpu_api();
  // Kernel code runs as the request's user; the runtime has opened the GPU
  // as root by then.
  auto reply = run_gpu_request(*api, *req, [&](gpu_runner_request& r) {
    return switch_kernel_user(
      r.limits, {&r.reference_so, &r.baseline_so, &r.candidate_so});
  });
  if (sandbox.user_namespace)
    note_user_namespace(reply);
  reply.network_isolated = sandbox.network_isolated;
  reply.pid_isolated = sandbox.pid_isolated;
  reply.tasks_capped = sandbox.tasks_capped;
  reply.core = sandbox.core;
  reply.kernel_uid = static_cast<int64_t>(::getuid());
  // Without the PID namespace, what a kernel left running ends here.
  if (sandbox.orphans_adopted)
    end_children();
  write_reply_bytes(program, eat::wire::encode(reply));
  // _exit: no destructors of kernel code or of the GPU runtime may run (or
  // write to fd 4) after the reply; the driver reclaims the context.
  ::_exit(0);
}
