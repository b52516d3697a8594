// The GPU runner's sandbox: what eat-cuda-runner and eat-hip-runner do to
// themselves after reading the request and before touching the GPU or
// loading kernel code. The CPU runner's sandbox (devices/runner/sandbox.hpp)
// minus RLIMIT_AS, which the GPU runtimes cannot live with (they reserve
// hundreds of GiB of virtual address space for unified addressing):
// own process group, death with the parent, no new privileges, a private
// network namespace where permitted, the host thread pinned to one core,
// and the limits RLIMIT_CORE 0, RLIMIT_FSIZE, RLIMIT_CPU and RLIMIT_NPROC.
// The JIT cache is disabled (CUDA_CACHE_DISABLE=1) so that a kernel never
// writes outside the scratch directory. Device memory is bounded by the
// GPU itself and owned by the harness.
//
// Called once, from the runner's main thread, while it is the only thread.

#pragma once

#include <cstdint>

#include "devices/runner/sandbox.hpp"
#include "devices/runner_protocol.hpp"

namespace eat::devices {

/// Applies `limits` (except address space) and pins to `core`.
sandbox_report apply_gpu_sandbox(const runner_limits& limits, int32_t core);

} // namespace eat::devices
