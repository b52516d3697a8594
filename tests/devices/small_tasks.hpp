// Shipped tasks (kernels/) on small workloads, for tests that run their
// kernels slowly (CUDA on the CPU): a task loaded with workload lines of
// FlashInfer-Bench's JSONL in place of its own, and such lines for the
// rmsnorm, MLA and GQA decode definitions.

#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "actors/protocol/task.hpp"

namespace eat::devices::test {

/// The task kernels/<name> with `lines` (workload JSONL) as its workloads,
/// written to a file in `dir`; fails the test if it does not load.
task_spec small_task(const std::string& name,
  const std::vector<std::string>& lines, const std::filesystem::path& dir);

/// A workload line of the rmsnorm_h4096 definition: `batch` rows of its
/// constant 4096, inputs random.
std::string rmsnorm_line(int batch);

/// A workload line of the MLA (`mla`) or GQA decode definition: `batch`
/// requests over `tokens` pages in all, the other inputs random.
std::string decode_line(bool mla, int batch, int tokens);

} // namespace eat::devices::test
