// Specification of GPU discovery (devices/gpu_probe.hpp). On a machine
// without GPUs each backend must say why it has none; on a machine with
// GPUs (scripts/gpu-check.sh on the device machine) every GPU must be fully
// described and pass the health-check kernel.

#include <catch2/catch.hpp>

#include "devices/gpu_probe.hpp"

using namespace eat::devices;

namespace {

void check_backend(const gpu_probe_result& probe, const std::string& backend,
                   gpu_health (*checker)(int)) {
  INFO(backend << ": " << probe.error);
  if (!probe.built) {
    CHECK(probe.devices.empty());
    CHECK_THAT(probe.error, Catch::Contains("built without"));
    CHECK_FALSE(checker(0).ok);
    return;
  }
  CHECK_THAT(probe.versions, Catch::Contains("runtime"));
  if (probe.devices.empty()) {
    CHECK_FALSE(probe.error.empty());
    CHECK_FALSE(checker(0).ok);
    return;
  }
  for (const auto& g : probe.devices) {
    CHECK(g.backend == backend);
    CHECK_FALSE(g.name.empty());
    CHECK_FALSE(g.arch.empty());
    CHECK_FALSE(g.uuid.empty());
    CHECK(g.memory_bytes > 0);
    CHECK(g.multiprocessors > 0);
    auto health = checker(g.index);
    INFO(health.detail);
    CHECK(health.ok);
  }
}

} // namespace

TEST_CASE("the CUDA backend describes every GPU or says why there is none") {
  check_backend(probe_cuda(), "cuda", check_cuda);
}

TEST_CASE("the HIP backend describes every GPU or says why there is none") {
  check_backend(probe_hip(), "hip", check_hip);
}

TEST_CASE("a health check of a GPU that does not exist fails with a reason") {
  auto cuda = check_cuda(1000);
  CHECK_FALSE(cuda.ok);
  CHECK_FALSE(cuda.detail.empty());
  auto hip = check_hip(1000);
  CHECK_FALSE(hip.ok);
  CHECK_FALSE(hip.detail.empty());
}
