// eat-runner: evaluates one candidate in a fresh, sandboxed process
// (docs/harness.md). The CPU device starts it with posix_spawn: the request
// arrives on fd 3, the reply leaves on fd 4 (devices/runner_protocol.hpp).
// Exit codes: 0 after a complete reply; 2 if the request cannot be read or
// decoded; 3 if the sandbox cannot be set up; 4 if the reply cannot be
// written. Failures before the reply are explained on stderr. Started with
// --kernel-host, it is a kernel's process instead (kernel_host.hpp).

#include <cstring>
#include <memory>

#include <unistd.h>

#include "actors/protocol/wire.hpp"
#include "devices/runner/entries.hpp"
#include "devices/runner/harness.hpp"
#include "devices/runner/kernel_host.hpp"
#include "devices/runner/orphans.hpp"
#include "devices/runner/runner_pipes.hpp"
#include "devices/runner/sandbox.hpp"
#include "devices/runner_protocol.hpp"
#include "devices/shared_arena.hpp"

int main(int argc, char** argv) {
  using namespace eat::devices;
  if (argc > 1 && std::strcmp(argv[1], kernel_host_flag) == 0)
    return kernel_host_main(argc, argv);
  constexpr const char* program = "eat-runner";
  keep_only_protocol_fds();
  auto req = eat::wire::decode<runner_request>(read_request_bytes(program));
  if (!req)
    runner_exit(program, 2, "malformed request: " + eat::render(req.error()));
  // Made before the sandbox's limits: a memory file is a file, and
  // RLIMIT_FSIZE would not let it grow to its size.
  std::unique_ptr<shared_arena> arena;
  if (req->kernel_processes) {
    arena = std::make_unique<shared_arena>(
      kernel_arena_bytes(req->limits.address_space_mib));
    if (!arena->error().empty())
      runner_exit(program, 3,
        "cannot make the memory shared with kernel processes: "
          + arena->error());
    arena->install();
  }
  auto sandbox = apply_sandbox(req->limits, req->core, sandboxed::cpu_runner,
    {&req->reference_so, &req->baseline_so, &req->candidate_so});
  if (!sandbox.error.empty())
    runner_exit(program, 3, "cannot set up the sandbox: " + sandbox.error);
  steady_heap_for_kernels();
  auto reply = run_request(*req);
  reply.network_isolated = sandbox.network_isolated;
  reply.pid_isolated = sandbox.pid_isolated;
  reply.tasks_capped = sandbox.tasks_capped;
  reply.core = sandbox.core;
  reply.kernel_uid = sandbox.kernel_uid;
  reply.cgroup_cpu_time = sandbox.cgroup_cpu_time;
  // Without the PID namespace, what a kernel left running ends here.
  if (sandbox.orphans_adopted)
    end_children();
  write_reply_bytes(program, eat::wire::encode(reply));
  // _exit: no static destructors or atexit handlers of kernel code may run
  // (or write to fd 4) after the reply.
  ::_exit(0);
}
