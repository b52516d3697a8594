// What a GPU compiler reports about each kernel it built: registers, shared
// memory (LDS), stack or scratch, spills and (HIP) occupancy, as nvcc
// prints them with --resource-usage and hipcc with
// -Rpass-analysis=kernel-resource-usage. The GPU toolchain passes those
// flags (gpu_toolchain.hpp), so every candidate's build log carries the
// report (BENCHMARK-PROTOCOL.md: record registers and shared memory where
// the toolchain reports them); this reads it back as one line per kernel
// for the agent's `eat eval` answer.

#pragma once

#include <string>
#include <vector>

namespace eat::devices {

/// One line per kernel found in `log`, e.g. "tiled (sm_90): 40 registers,
/// 4096 B shared, 256 B stack, 0 B spill stores, 0 B spill loads" or
/// "tiled: 71 VGPRs, 0 AGPRs, 10 SGPRs, 4096 B LDS, 272 B scratch per lane,
/// 0 VGPR and 0 SGPR spills, occupancy 7 waves per SIMD"; C++ names are
/// demangled, without their parameters and return type ("tk<3>"). Empty
/// when the log has no such report (a CPU compile).
std::vector<std::string> kernel_resources(const std::string& log);

} // namespace eat::devices
