// The compile stage of the GPU devices: nvcc (CUDA) or hipcc (HIP) builds
// the baseline and the candidate into shared objects for one GPU
// architecture, the host C++ compiler builds the reference (it runs on the
// CPU, in fp64). Both go through devices/compiler.hpp, so they share its
// cache (keyed by compiler identity, flags and source), timeout, logs and
// atomic writes.
//
// compiler.hpp always appends "-shared -fPIC" and takes the first line of
// `--version` as the identity. nvcc rejects a bare -fPIC and prints no
// version on that line, hipcc prints a Python traceback first when it finds
// no GPU; so the toolchain writes a small driver script under
// `<work_dir>/toolchain/` that forwards to the real compiler, passes -fPIC
// to nvcc's host compiler, and answers --version with the real release
// line (so a toolkit upgrade changes every cache key).
//
// A toolchain is a plain value owned by one GPU device; prepare() may run
// on several threads at once.

#pragma once

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/task.hpp"
#include "devices/compiler.hpp"
#include "devices/device.hpp"

namespace eat::devices {

/// Compilers of one GPU backend.
class gpu_toolchain {
public:
  /// Makes the toolchain of `backend` ("cuda" or "hip") from the device
  /// compiler `program` (e.g. "nvcc"; looked up in PATH without a '/') and
  /// the host compiler `host_program`; `flags` go to every device compile
  /// (e.g. {"-O3"}). Fails with error::device_unavailable if a compiler
  /// does not run.
  static caf::expected<gpu_toolchain> make(std::string backend,
    std::string program, std::string host_program,
    std::vector<std::string> flags, std::string work_dir, double timeout_s);

  /// Compiles the task's reference (host) and baseline and `c` (device) for
  /// `arch` ("sm_90", "gfx90a"); the task's expert links its expert_libs
  /// (expert_link_flags). Never throws: failures are statuses.
  prepared prepare(
    const task_spec& task, const candidate& c, const std::string& arch) const;

  /// Flags of a device compile for `arch`, before "-shared -fPIC".
  std::vector<std::string> device_flags(const std::string& arch) const;

  /// E.g. "nvcc: Cuda compilation tools, release 13.0, V13.0.88; -O3 ...".
  std::string description(const std::string& arch) const;

  /// The device compiler's identity line.
  const std::string& identity() const {
    return device_.identity();
  }

private:
  gpu_toolchain(std::string backend, compiler device, compiler host,
    std::vector<std::string> flags);

  std::string backend_;
  compiler device_;
  compiler host_;
  std::vector<std::string> flags_;
};

/// Link flags for `c` beyond the device flags: "-l<lib>" for each of the
/// task's expert_libs (e.g. cublas) when `c` is the task's own expert
/// baseline, after the backend's spelling of --no-as-needed; none for any
/// other candidate (only the task's expert may link a vendor library). The
/// libraries must be on the dynamic loader's path where the runner runs
/// (the CUDA toolkit's lib directory via ld.so.conf.d, as NVIDIA's
/// packages install it). Pure.
std::vector<std::string> expert_link_flags(
  const std::string& backend, const task_spec& task, const candidate& c);

/// The nvcc target for a GPU of `arch` ("sm_86"): from sm_90 on, its
/// architecture-specific variant ("sm_90a"), whose instructions (Hopper's
/// wgmma and setmaxnreg, Blackwell's tcgen05) the vendor libraries use and
/// whose code runs on that architecture only, as every candidate's does;
/// `arch` as it is before, or if not of the form sm_NN. Pure.
std::string nvcc_arch(const std::string& arch);

/// Returns the release line of a compiler's `--version` output for
/// `backend`: nvcc's "Cuda compilation tools, release ..." line, hipcc's
/// "HIP version" and "clang version" lines joined; "" if absent. Pure.
std::string toolchain_version_line(
  const std::string& backend, const std::string& version_output);

/// Returns the text of the driver script for `backend` that runs `program`
/// and answers --version with `identity`. Pure.
std::string toolchain_script(const std::string& backend,
  const std::string& program, const std::string& identity);

} // namespace eat::devices
