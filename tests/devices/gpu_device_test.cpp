// Specification of the CUDA and HIP devices where no GPU is needed: on a
// machine without a GPU (or driver) making a device fails with a precise
// reason, and the peak table and toolchain version parsing behave.

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "devices/gpu_device.hpp"
#include "devices/gpu_peaks.hpp"
#include "devices/gpu_probe.hpp"
#include "devices/gpu_toolchain.hpp"
#include "tests/devices/gpu_support.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

void check_unavailable(const std::string& backend, const gpu_probe_result& p) {
  if (!p.devices.empty())
    return; // a GPU machine: the GPU tests (label gpu) cover it
  auto dir = make_temp_dir();
  auto opts = quick_gpu_options(backend, dir);
  auto dev = backend == "cuda" ? make_cuda_device("cuda0", 0, opts)
                               : make_hip_device("hip0", 0, opts);
  REQUIRE_FALSE(dev);
  CHECK(dev.error() == make_error(error::device_unavailable, ""));
  auto text = render(dev.error());
  INFO(text);
  CHECK_THAT(text, Catch::Contains(backend + " device"));
  // The reason is the runtime's: no driver, no device, or not built.
  CHECK_THAT(text, Catch::Contains(p.error));
  CHECK_FALSE(p.error.empty());
  auto all = make_gpu_devices(backend, opts);
  REQUIRE_FALSE(all);
  CHECK_THAT(render(all.error()), Catch::Contains("no GPU"));
}

} // namespace

TEST_CASE("without a CUDA GPU, making a CUDA device fails with the reason") {
  check_unavailable("cuda", probe_built("cuda"));
}

TEST_CASE("without a HIP GPU, making a HIP device fails with the reason") {
  check_unavailable("hip", probe_built("hip"));
}

TEST_CASE("an unknown GPU backend is a configuration error") {
  auto dev = make_gpu_devices("opencl", gpu_options{});
  REQUIRE_FALSE(dev);
  CHECK(dev.error() == make_error(error::invalid_config, ""));
  gpu_info gpu;
  gpu.backend = "opencl";
  auto one = make_gpu_device_for("cl0", gpu, "", gpu_options{});
  REQUIRE_FALSE(one);
  CHECK(one.error() == make_error(error::invalid_config, ""));
}

TEST_CASE("the peak table knows the common data-centre GPUs") {
  auto h200 = tabled_peaks("NVIDIA H200");
  REQUIRE(h200);
  CHECK(h200->model == "H200 SXM");
  CHECK(h200->bytes_per_s == Approx(4.8e12));
  // The gate's rate covers tf32 tensor cores, above plain fp32.
  CHECK(h200->fp32_gate_flops() > h200->fp32_flops);
  auto pcie = tabled_peaks("NVIDIA H100 PCIe");
  REQUIRE(pcie);
  CHECK(pcie->model == "H100 PCIe");
  CHECK(tabled_peaks("NVIDIA H100 80GB HBM3")->model == "H100 SXM");
  // "GH200" contains "H200": the Grace Hopper row must come first.
  CHECK(tabled_peaks("NVIDIA GH200 480GB")->model == "GH200");
  CHECK(tabled_peaks("AMD Instinct MI300X")->bf16_flops == Approx(1307e12));
  CHECK_FALSE(tabled_peaks("NVIDIA GeForce GT 710"));
  CHECK(estimated_peak_flops(132, 1980000) > 67e12);
}

TEST_CASE("the peak table's AMD rows are per device as HIP shows it, with "
          "the matrix units' XF32 rate") {
  // HIP shows each of an MI250X's two dies as a device of its own.
  auto gcd = tabled_peaks("AMD Instinct MI250X", 110);
  REQUIRE(gcd);
  CHECK(gcd->fp32_gate_flops() == Approx(47.9e12));
  CHECK(gcd->bf16_flops == Approx(191.5e12));
  CHECK(gcd->bytes_per_s == Approx(1.6e12));
  // An XF32 GEMM on an MI300X's matrix units is not faster than light.
  auto mi300x = tabled_peaks("AMD Instinct MI300X", 304);
  REQUIRE(mi300x);
  CHECK(mi300x->fp32_flops == Approx(163.4e12));
  CHECK(mi300x->fp32_gate_flops() == Approx(653.7e12));
}

TEST_CASE("a part of a GPU that shows fewer units gets its share of the "
          "FLOP/s and the whole bandwidth") {
  // A MIG instance of an H100 with half its SMs, an MI300X in CPX mode.
  auto half = tabled_peaks("NVIDIA H100 80GB HBM3", 66);
  REQUIRE(half);
  CHECK(half->fp32_gate_flops() == Approx(247e12));
  CHECK(half->bf16_flops == Approx(494.5e12));
  CHECK(half->bytes_per_s == Approx(3.35e12));
  CHECK(half->model == "H100 SXM (66 of 132 units)");
  auto cpx = tabled_peaks("AMD Instinct MI300X", 38);
  REQUIRE(cpx);
  CHECK(cpx->bf16_flops == Approx(1307e12 / 8));
  // As many units as the model, more, or none known: the table's figures.
  for (int units : {132, 140, 0})
    CHECK(
      tabled_peaks("NVIDIA H200", units)->fp32_gate_flops() == Approx(494e12));
}

TEST_CASE("the toolchain identity is the compiler's release line") {
  auto nvcc = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005\n"
              "Cuda compilation tools, release 13.0, V13.0.88\n";
  CHECK(toolchain_version_line("cuda", nvcc)
        == "nvcc: Cuda compilation tools, release 13.0, V13.0.88");
  auto hipcc = "Traceback (most recent call last):\nHIP version: 5.2.21153-0\n"
               "Debian clang version 15.0.6\nTarget: x86_64-pc-linux-gnu\n";
  CHECK(toolchain_version_line("hip", hipcc)
        == "hipcc: HIP version: 5.2.21153-0; Debian clang version 15.0.6");
  CHECK(toolchain_version_line("cuda", "g++ (Debian 12.2.0) 12.2.0\n").empty());
}

TEST_CASE("candidates for Hopper and later GPUs are compiled for their "
          "architecture-specific target, older ones for the plain one") {
  CHECK(nvcc_arch("sm_90") == "sm_90a");
  CHECK(nvcc_arch("sm_100") == "sm_100a");
  CHECK(nvcc_arch("sm_120") == "sm_120a");
  CHECK(nvcc_arch("sm_89") == "sm_89");
  CHECK(nvcc_arch("sm_80") == "sm_80");
  // Already specific, or not of the form sm_NN: as given.
  CHECK(nvcc_arch("sm_90a") == "sm_90a");
  CHECK(nvcc_arch("compute_90") == "compute_90");
  CHECK(nvcc_arch("sm_") == "sm_");
  CHECK(nvcc_arch("gfx90a") == "gfx90a");
}

TEST_CASE("the nvcc driver script rewrites -fPIC and quotes the program") {
  auto script = toolchain_script("cuda", "/opt/it's/nvcc", "nvcc: release 1");
  CHECK_THAT(script, Catch::Contains("-Xcompiler -fPIC"));
  CHECK_THAT(script, Catch::Contains("exec '/opt/it'\\''s/nvcc' \"$@\""));
  CHECK_THAT(script, Catch::Contains("'nvcc: release 1'"));
  auto hip = toolchain_script("hip", "hipcc", "hipcc: HIP version: 5");
  CHECK_THAT(hip, !Catch::Contains("-Xcompiler"));
}
