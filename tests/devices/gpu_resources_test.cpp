// Specification of reading a GPU compiler's resource report back
// (devices/gpu_resources.hpp). The logs below are what nvcc 13
// (--resource-usage, sm_90) and Debian 12's hipcc (clang 15,
// -Rpass-analysis=kernel-resource-usage, gfx90a) printed for the same file:
// a kernel with shared memory and a stack array, a template instance, and a
// device function that is not a kernel.

#include <catch2/catch.hpp>

#include "devices/gpu_resources.hpp"

using eat::devices::kernel_resources;

TEST_CASE("nvcc's report gives a line per kernel, device functions left "
          "out") {
  auto log = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z2tkILi3EEvPf' for 'sm_90'
ptxas info    : Function properties for _Z2tkILi3EEvPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 9.321 ms
ptxas info    : Compiling entry function 'tiled' for 'sm_90'
ptxas info    : Function properties for tiled
    256 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 256 bytes cumulative stack size, 4096 bytes smem
ptxas info    : Compile time = 10.960 ms
ptxas info    : Function properties for _Z6helperPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)";
  auto lines = kernel_resources(log);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]
        == "tk<3> (sm_90): 8 registers, 0 B shared, 0 B stack, "
           "0 B spill stores, 0 B spill loads");
  CHECK(lines[1]
        == "tiled (sm_90): 40 registers, 4096 B shared, 256 B stack, 12 B "
           "spill stores, 8 B spill loads");
}

TEST_CASE("hipcc's remarks give a line per kernel") {
  auto log
    = R"(r.hip:4:1: remark: Function Name: tiled [-Rpass-analysis=kernel-resource-usage]
extern "C" __global__ void tiled(float* x) { __shared__ float t[1024]; }
^
r.hip:4:1: remark:     SGPRs: 10 [-Rpass-analysis=kernel-resource-usage]
r.hip:4:1: remark:     VGPRs: 71 [-Rpass-analysis=kernel-resource-usage]
r.hip:4:1: remark:     AGPRs: 0 [-Rpass-analysis=kernel-resource-usage]
r.hip:4:1: remark:     ScratchSize [bytes/lane]: 272 [-Rpass-analysis=kernel-resource-usage]
r.hip:4:1: remark:     Occupancy [waves/SIMD]: 7 [-Rpass-analysis=kernel-resource-usage]
r.hip:4:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
r.hip:4:1: remark:     VGPRs Spill: 3 [-Rpass-analysis=kernel-resource-usage]
r.hip:4:1: remark:     LDS Size [bytes/block]: 4096 [-Rpass-analysis=kernel-resource-usage]
r.hip:6:1: remark: Function Name: _Z2tkILi3EEvPf [-Rpass-analysis=kernel-resource-usage]
r.hip:6:1: remark:     SGPRs: 6 [-Rpass-analysis=kernel-resource-usage]
r.hip:6:1: remark:     VGPRs: 2 [-Rpass-analysis=kernel-resource-usage]
r.hip:6:1: remark:     AGPRs: 0 [-Rpass-analysis=kernel-resource-usage]
r.hip:6:1: remark:     ScratchSize [bytes/lane]: 0 [-Rpass-analysis=kernel-resource-usage]
r.hip:6:1: remark:     Occupancy [waves/SIMD]: 8 [-Rpass-analysis=kernel-resource-usage]
r.hip:6:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
r.hip:6:1: remark:     VGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
r.hip:6:1: remark:     LDS Size [bytes/block]: 0 [-Rpass-analysis=kernel-resource-usage]
)";
  auto lines = kernel_resources(log);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]
        == "tiled: 71 VGPRs, 0 AGPRs, 10 SGPRs, 4096 B LDS, 272 B scratch "
           "per lane, 3 VGPR and 0 SGPR spills, occupancy 7 waves per SIMD");
  CHECK(lines[1]
        == "tk<3>: 2 VGPRs, 0 AGPRs, 6 SGPRs, 0 B LDS, 0 B "
           "scratch per lane, 0 VGPR and 0 SGPR spills, occupancy 8 waves "
           "per SIMD");
}

TEST_CASE("kernel names lose their parameters, return type and anonymous "
          "namespace, and keep their template arguments") {
  auto line = [](const std::string& mangled) {
    auto lines = kernel_resources("ptxas info    : Compiling entry function '"
                                  + mangled + "' for 'sm_90'\n"
                                  + "ptxas info    : Used 8 registers\n");
    REQUIRE(lines.size() == 1);
    return lines[0].substr(0, lines[0].find(" (sm_90)"));
  };
  // (anonymous namespace)::tiled_gemm(__half const*, long)
  CHECK(line("_ZN12_GLOBAL__N_110tiled_gemmEPK6__halfl") == "tiled_gemm");
  // void ns::k<int, 3>(float*)
  CHECK(line("_ZN2ns1kIiLi3EEEvPf") == "ns::k<int, 3>");
  CHECK(line("plain_c_kernel") == "plain_c_kernel");
}

TEST_CASE("a log without a resource report gives no lines") {
  CHECK(kernel_resources("").empty());
  CHECK(kernel_resources("candidate.cpp:3:5: warning: unused variable 'x'\n")
          .empty());
  // A report cut off before its register count names nothing half-read.
  CHECK(kernel_resources("ptxas info    : Compiling entry function 'k' for "
                         "'sm_90'\n")
          .empty());
  CHECK(kernel_resources("x.hip:1:1: remark: Function Name: k "
                         "[-Rpass-analysis=kernel-resource-usage]\n")
          .empty());
  // Lines that only look like a report (a candidate's #warning can print
  // anything) are skipped, whatever they hold.
  CHECK(kernel_resources("remark:  [-Rpass-analysis=kernel-resource-usage]\n"
                         "remark: [-Rpass-analysis=kernel-resource-usage]\n"
                         "remark: : [-Rpass-analysis=kernel-resource-usage]\n"
                         "ptxas info Compiling entry function ''\n"
                         "ptxas info    : Used registers\n"
                         "ptxas info    : Function properties for \n")
          .empty());
}
