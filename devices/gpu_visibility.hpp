// Which GPUs a GPU runner's process can see. A runner that saw every GPU of
// the machine would let kernel code select another one (cudaSetDevice) and
// run there while another device's evaluation times its kernels. The
// runner is started with the runtime's visible-devices variable naming only
// its GPU, as the parent sees it: the entry of the parent's own list at the
// GPU's index (an index, a UUID, a MIG instance: passed on as written), or
// the index itself when the parent has no list. The runner then opens GPU 0
// and refuses to evaluate unless the runtime shows exactly one GPU with the
// expected identity (devices/gpu_runner/gpu_harness.cpp), so a variable the
// runtime reads otherwise fails loudly instead of timing the wrong GPU.
// Plain functions; any thread.

#pragma once

#include <functional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace eat::devices {

/// Looks up an environment variable (nullptr when unset); std::getenv by
/// default, a map in tests.
using env_lookup = std::function<const char*(const char*)>;

/// The environment entries of a runner of `backend` ("cuda" or "hip") that
/// is to see only the GPU of runtime index `index` in the parent: "NAME=value"
/// entries to set and bare "NAME" entries to remove (process_spec::env).
/// CUDA: CUDA_VISIBLE_DEVICES. HIP: HIP_VISIBLE_DEVICES, the list taken
/// from HIP_VISIBLE_DEVICES or else CUDA_VISIBLE_DEVICES, which HIP also
/// reads and the child then does not have. Fails (invalid_config) when the
/// parent's list has no entry at `index`.
caf::expected<std::vector<std::string>> only_gpu_environment(
  const std::string& backend, int index, const env_lookup& get = std::getenv);

} // namespace eat::devices
