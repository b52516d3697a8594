// Specification of GPU discovery (devices/gpu_discovery.hpp): eat asks the
// backends' runners, each question in a process of its own. On a machine
// without GPUs each backend must say why it has none; on a machine with
// GPUs (scripts/gpu-check.sh on the device machine) every GPU must be fully
// described and pass the health-check kernel. A runner that is missing,
// fails, answers garbage or is of the other backend is reported as such;
// the runners on the CPU (tests/devices/runner_on_cpu.cpp) answer every
// question for a GPU whose memory is host memory.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>

#include "actors/protocol/error.hpp"
#include "devices/gpu_discovery.hpp"
#include "devices/subprocess.hpp"
#include "tests/devices/gpu_support.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

void check_backend(const std::string& backend) {
  auto runner = built_runner(backend);
  auto probe = probe_gpus(backend, runner);
  INFO(backend << ": " << probe.error);
  if (!probe.built) {
    CHECK(probe.devices.empty());
    CHECK_THAT(probe.error, Catch::Contains("built without"));
    CHECK_FALSE(check_gpu(backend, runner, 0).ok);
    return;
  }
  CHECK_THAT(probe.versions, Catch::Contains("runtime"));
  if (probe.devices.empty()) {
    CHECK_FALSE(probe.error.empty());
    CHECK_FALSE(check_gpu(backend, runner, 0).ok);
    return;
  }
  for (const auto& g : probe.devices) {
    CHECK(g.backend == backend);
    CHECK_FALSE(g.name.empty());
    CHECK_FALSE(g.arch.empty());
    CHECK_FALSE(g.uuid.empty());
    CHECK(g.memory_bytes > 0);
    CHECK(g.multiprocessors > 0);
    auto health = check_gpu(backend, runner, g.index);
    INFO(health.detail);
    CHECK(health.ok);
  }
}

/// An executable shell script `body` in `dir`, standing in for a runner.
std::string fake_runner(const scratch_dir& dir, const std::string& body) {
  auto path = (dir.path() / "fake-runner").string();
  std::ofstream{path} << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

} // namespace

TEST_CASE("the CUDA backend describes every GPU or says why there is none") {
  check_backend("cuda");
}

TEST_CASE("the HIP backend describes every GPU or says why there is none") {
  check_backend("hip");
}

TEST_CASE("a health check of a GPU that does not exist fails with a reason") {
  for (const std::string backend : {"cuda", "hip"}) {
    auto health = check_gpu(backend, built_runner(backend), 1000);
    CHECK_FALSE(health.ok);
    CHECK_FALSE(health.detail.empty());
  }
}

TEST_CASE("GPU discovery without a runner names the path it looked at") {
  auto probe = probe_gpus("cuda", "/nonexistent/eat-cuda-runner");
  CHECK(probe.devices.empty());
  if (probe.built)
    CHECK_THAT(probe.error, Catch::Contains("no executable GPU runner at "
                                            "'/nonexistent/eat-cuda-runner'"));
  else
    CHECK_THAT(probe.error, Catch::Contains("built without CUDA"));
  auto bandwidth = measure_copy_bandwidth("hip", "", 0);
  CHECK_FALSE(bandwidth);
}

TEST_CASE("GPU discovery of an unknown backend is refused") {
  auto probe = probe_gpus("opencl", "/bin/true");
  CHECK_FALSE(probe.built);
  CHECK_THAT(probe.error, Catch::Contains("unknown GPU backend 'opencl'"));
}

TEST_CASE("a runner that fails to answer is reported with its exit and "
          "output") {
  auto dir = make_temp_dir();
  // What a runner whose GPU runtime library is missing does.
  auto runner = fake_runner(dir,
    "echo 'error while loading shared libraries: libcudart.so.13: cannot "
    "open shared object file' >&2; exit 127");
  auto probe = probe_gpus("cuda", runner);
  CHECK(probe.devices.empty());
  CHECK_THAT(probe.error, Catch::Contains("--probe exited with status 127"));
  CHECK_THAT(probe.error, Catch::Contains("libcudart.so.13: cannot open"));
  auto health = check_gpu("cuda", runner, 0);
  CHECK_FALSE(health.ok);
  CHECK_THAT(health.detail, Catch::Contains("--health 0 exited with status"));
}

TEST_CASE("a runner killed by a signal is reported as such") {
  auto dir = make_temp_dir();
  auto runner = fake_runner(dir, "kill -SEGV $$");
  auto bandwidth = measure_copy_bandwidth("cuda", runner, 0);
  REQUIRE_FALSE(bandwidth);
  CHECK_THAT(render(bandwidth.error()),
    Catch::Contains("--bandwidth 0 killed by SIGSEGV"));
}

TEST_CASE("a runner that answers garbage is reported, not believed") {
  auto dir = make_temp_dir();
  auto runner = fake_runner(dir, "printf 'not msgpack' >&4");
  auto probe = probe_gpus("cuda", runner);
  CHECK(probe.devices.empty());
  CHECK_THAT(probe.error, Catch::Contains("--probe: malformed_message"));
  auto silent = probe_gpus("cuda", fake_runner(dir, "exit 0"));
  CHECK(silent.devices.empty());
  CHECK_THAT(silent.error, Catch::Contains("malformed_message"));
}

TEST_CASE("a runner on the CPU describes its GPU, checks it and measures its "
          "copy bandwidth") {
  for (const std::string backend : {"cuda", "hip"}) {
    auto runner = backend == "cuda" ? EAT_TEST_CUDA_RUNNER_ON_CPU
                                    : EAT_TEST_HIP_RUNNER_ON_CPU;
    INFO(backend);
    auto probe = probe_gpus(backend, runner);
    INFO(probe.error);
    CHECK(probe.built);
    REQUIRE(probe.devices.size() == 1);
    CHECK(probe.devices[0].backend == backend);
    CHECK(probe.devices[0].name == "host memory");
    CHECK(probe.devices[0].uuid == "FAKE-0");
    CHECK(probe.versions == "host memory runtime");
    CHECK(check_gpu(backend, runner, 0).ok);
    auto other = check_gpu(backend, runner, 1);
    CHECK_FALSE(other.ok);
    CHECK(other.detail == "no such fake GPU");
    auto bandwidth = measure_copy_bandwidth(backend, runner, 0);
    INFO((bandwidth ? std::string{} : render(bandwidth.error())));
    REQUIRE(bandwidth);
    CHECK(*bandwidth > 1e8);
    // Asked as the other backend, the runner is refused.
    auto crossed = probe_gpus(backend == "cuda" ? "hip" : "cuda", runner);
    CHECK(crossed.devices.empty());
    CHECK_THAT(crossed.error, Catch::Contains("a runner for '" + backend));
  }
}

TEST_CASE("a runner given an option it does not know says how to call it") {
  auto out
    = run_captured({EAT_TEST_CUDA_RUNNER_ON_CPU, "--health", "gpu0"}, "", 30);
  REQUIRE(out);
  CHECK(out->status.code == 2);
  CHECK_THAT(out->output, Catch::Contains("not a GPU index: 'gpu0'"));
  CHECK_THAT(out->output, Catch::Contains("usage:"));
  auto bare
    = run_captured({EAT_TEST_CUDA_RUNNER_ON_CPU, "--bandwidth"}, "", 30);
  REQUIRE(bare);
  CHECK(bare->status.code == 2);
  CHECK_THAT(bare->output, Catch::Contains("--bandwidth takes one GPU index"));
}

namespace {

/// How many of this process's open files are in `dir`.
int files_open_in(const std::filesystem::path& dir) {
  int n = 0;
  for (const auto& fd : std::filesystem::directory_iterator{"/proc/self/fd"}) {
    std::error_code ec;
    auto target = std::filesystem::read_symlink(fd.path(), ec);
    n += !ec && target.parent_path() == dir;
  }
  return n;
}

} // namespace

TEST_CASE("CUDA devices hold the GPUs' device files open, and only those, "
          "while any of them lives") {
  auto dev = make_temp_dir();
  for (auto name : {"nvidia0", "nvidia1", "nvidia12", "nvidiactl", "nvidia-uvm",
         "nvidia-modeset", "nvidia", "nvidia0x"})
    std::ofstream{dev.path() / name};
  auto dir = std::filesystem::canonical(dev.path());
  auto first = keep_initialised("cuda", dir.string());
  REQUIRE(first != nullptr);
  CHECK(files_open_in(dir) == 3);
  auto second = keep_initialised("cuda", dir.string());
  CHECK(second == first);
  CHECK(files_open_in(dir) == 3);
  first.reset();
  CHECK(files_open_in(dir) == 3);
  second.reset();
  CHECK(files_open_in(dir) == 0);
  auto again = keep_initialised("cuda", dir.string());
  CHECK(files_open_in(dir) == 3);
}

TEST_CASE("HIP devices and machines without NVIDIA device files hold "
          "nothing open") {
  auto dev = make_temp_dir();
  std::ofstream{dev.path() / "nvidia0"};
  auto dir = std::filesystem::canonical(dev.path());
  CHECK(keep_initialised("hip", dir.string()) == nullptr);
  CHECK(files_open_in(dir) == 0);
  auto empty = make_temp_dir();
  auto none = keep_initialised("cuda", empty.path().string());
  REQUIRE(none != nullptr);
  CHECK(files_open_in(std::filesystem::canonical(empty.path())) == 0);
}

TEST_CASE("the HIP runner offers only GPUs whose architecture it was built "
          "for") {
  // Its own kernels (health check, input redraw) exist only for the
  // architectures its hipcc could target: Debian 12's builds gfx90a, not
  // an MI300's gfx942.
  CHECK(hip_built_for("gfx90a:sramecc+:xnack-", "gfx90a"));
  CHECK(hip_built_for("gfx942:sramecc+:xnack-", "gfx90a,gfx942"));
  CHECK(hip_built_for("gfx942", "gfx90a,gfx942"));
  CHECK_FALSE(hip_built_for("gfx942:sramecc+:xnack-", "gfx90a"));
  CHECK_FALSE(hip_built_for("gfx94", "gfx942"));
  CHECK_FALSE(hip_built_for("gfx9420", "gfx942"));
  CHECK_FALSE(hip_built_for("", "gfx90a"));
  CHECK_FALSE(hip_built_for("gfx90a", ""));
}
