// Checks that a GPU task's CUDA or HIP source agrees with a task's
// reference when run on the CPU (tests/devices/cuda_on_cpu.hpp): a source
// evaluated as a CPU candidate, a shipped file, a template family's
// instances. Shared by the tests of the GPU tasks' kernels on the CPU.

#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "actors/protocol/task.hpp"
#include "devices/device.hpp"
#include "devices/scratch_dir.hpp"

namespace eat::devices::test {

/// Evaluates C++ source `source` as a candidate of `task` on a fresh CPU
/// device, with `seed`.
eval_result evaluate_source(
  const task_spec& task, const std::string& source, uint64_t seed = 11);

/// Evaluates CUDA source `cu` (HIP source with `hip`) as a CPU candidate
/// of `task` on a fresh CPU device.
eval_result evaluate_on_cpu(
  const task_spec& task, const std::string& cu, bool hip = false);

/// The GPU source file `path` (from the source tree; HIP with `hip`)
/// passes against the reference of `task` when run on the CPU.
void check_file_passes(
  const task_spec& task, const std::string& path, bool hip);

/// The template family `name` of `gpu`; fails the test if it has none.
const template_family& family_of(const task_spec& gpu, const std::string& name);

/// "k=v k=v" for a template instance.
std::string instance_label(const param_map& params);

/// Each of `instances` of `family` (a CUDA family, HIP with `hip`) passes
/// against the reference of `task` when run on the CPU.
void check_instances(const task_spec& task, const template_family& family,
  const std::vector<param_map>& instances, bool hip);

/// The GPU task kernels/<name> (a HIP one with `hip`) as a CPU task on the
/// workload lines `lines` (written to `dir`): its reference, tolerances
/// and generators, its GPU baseline run on the CPU as the baseline, and no
/// expert (a vendor library needs the GPU).
task_spec gpu_task_on_cpu(const std::string& name,
  const std::vector<std::string>& lines, const std::filesystem::path& dir,
  bool hip);

/// C++ source compiled with g++ (with `flags`) into a shared object and
/// loaded in this process; fails the test if it does not build or load.
class loaded_library {
public:
  explicit loaded_library(const std::string& source,
    const std::vector<std::string>& flags = {"-O2", "-std=c++17"});
  ~loaded_library();
  loaded_library(const loaded_library&) = delete;
  loaded_library& operator=(const loaded_library&) = delete;

  /// The address of `name`; fails the test if the library has none.
  void* symbol(const char* name) const;

private:
  scratch_dir dir_;
  void* handle_ = nullptr;
};

/// `source` with every `from` replaced by `to`; fails the test if there is
/// none.
std::string edited(
  std::string source, const std::string& from, const std::string& to);

} // namespace eat::devices::test
