// A task: a kernel to optimise. Loaded from kernels/<task>/task.toml by
// runtime/task_file.hpp and handed, read-only, to agents and devices.
// Crosses machines (MessagePack, docs/wire-format.md).

#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/protocol/describe.hpp"

namespace eat {

/// One problem size to measure, e.g. {"m": 256, "n": 256, "k": 256}.
struct workload {
  /// Short unique name, e.g. "m256_n256_k256".
  std::string name;
  /// Axis values by axis name.
  std::map<std::string, int64_t> axes;
};
EAT_DESCRIBE(workload, name, axes)

/// One tunable parameter of a template and its ordered choices.
struct param_space {
  std::string name;
  /// Choices in a meaningful order (neighbours are similar).
  std::vector<std::string> values;
};
EAT_DESCRIBE(param_space, name, values)

/// A parameterised kernel source: `{{name}}` placeholders are replaced by the
/// chosen value of each parameter.
struct template_family {
  std::string name;
  std::string source;
  std::vector<param_space> params;
};
EAT_DESCRIBE(template_family, name, source, params)

/// Everything an agent and a device need to know about a task.
struct task_spec {
  /// Task name (the folder name under the tasks directory).
  std::string name;
  /// Harness kind: the C ABI of the entry point and how inputs are made
  /// ("gemm", "rmsnorm" or "softmax", see docs/harness.md).
  std::string kind;
  /// Backend the sources are written for: "cpu", "cuda" or "hip". Devices
  /// of another kind do not evaluate the task ("sim" devices take any).
  std::string backend = "cpu";
  /// Element type of inputs and outputs, e.g. "float32".
  std::string dtype;
  /// Absolute and relative tolerance: |a - b| <= atol + rtol * |ref|.
  double atol = 0;
  double rtol = 0;
  std::vector<workload> workloads;
  /// Source of the reference (computed in a wider type).
  std::string reference_source;
  /// Source of the naive baseline that speedups are measured against.
  std::string baseline_source;
  /// Parameterised templates for the builtin agent.
  std::vector<template_family> families;
  /// What the task computes, for people and agents (may be empty).
  std::string description;
  /// Source of an expert baseline (e.g. a vendor library call); empty when
  /// the task has none. Reported next to results, never a speedup's base.
  std::string expert_source;
  /// Libraries the expert links against, e.g. {"openblas"} for -lopenblas.
  std::vector<std::string> expert_libs;
};
EAT_DESCRIBE(task_spec, name, kind, backend, dtype, atol, rtol, workloads,
             reference_source, baseline_source, families, description,
             expert_source, expert_libs)

} // namespace eat
