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

/// One input or output of a definition task's call, resolved for one
/// workload (kind "definition", docs/tasks.md): shapes are numbers here.
struct tensor_arg {
  /// Its name in definition.json.
  std::string name;
  /// "float32", "float16", "bfloat16", "int32" or "int64".
  std::string dtype;
  /// Extent of each dimension; empty for a scalar (shape null) or a 0-D
  /// tensor (shape []), both passed as a pointer to one element.
  std::vector<int64_t> shape;
  /// True for a scalar input: its value is `value`, never drawn.
  bool scalar = false;
  double value = 0;
  /// Inputs: how values are drawn: "random" (floats uniform in [-1, 1)),
  /// "uniform" (in [low, high)), "indptr" or "permutation".
  std::string generator = "random";
  /// indptr: the last offset; permutation: the exclusive bound of the ids.
  int64_t extent = 0;
  double low = -1;
  double high = 1;
  /// Outputs: |a - b| <= atol + rtol * |ref| on every element or, with a
  /// matched ratio below 1, on that fraction of the elements, none further
  /// than max_error from the reference (0: no cap;
  /// devices/kinds/tolerance.hpp).
  double atol = 0;
  double rtol = 0;
  double matched_ratio = 1;
  double max_error = 0;
};
EAT_DESCRIBE(tensor_arg, name, dtype, shape, scalar, value, generator, extent,
  low, high, atol, rtol, matched_ratio, max_error)
EAT_DESCRIBE_OPTIONAL(tensor_arg, matched_ratio, max_error)

/// One problem size to measure, e.g. {"m": 256, "n": 256, "k": 256}.
struct workload {
  /// Short unique name, e.g. "m256_n256_k256".
  std::string name;
  /// Axis values by axis name.
  std::map<std::string, int64_t> axes;
  /// Definition tasks only (empty otherwise), resolved by the task loader so
  /// that a device needs nothing else: every axis value in the order of
  /// definition.json's `axes`, the inputs and outputs in ABI order, and the
  /// useful FLOPs and compulsory bytes of one call (the task's formulas).
  std::vector<int64_t> abi_axes;
  std::vector<tensor_arg> inputs;
  std::vector<tensor_arg> outputs;
  double flops = 0;
  double bytes = 0;
  /// The uuid of the workload's line in workloads.jsonl (definition tasks
  /// whose line has one; empty otherwise), kept for exported traces.
  std::string uuid;
};
EAT_DESCRIBE(workload, name, axes, abi_axes, inputs, outputs, flops, bytes,
             uuid)

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
  /// Conditions every valid instance meets, over parameters and facts of
  /// the compile target, e.g. "mc >= mr" (actors/agent/constraints.hpp,
  /// docs/tasks.md); the source rejects the same instances.
  std::vector<std::string> constraints;
};
EAT_DESCRIBE(template_family, name, source, params, constraints)
// Added on 2026-12-01 after event logs stored tasks: logs without it decode.
EAT_DESCRIBE_OPTIONAL(template_family, constraints)

/// Everything an agent and a device need to know about a task.
struct task_spec {
  /// Task name (the folder name under the tasks directory).
  std::string name;
  /// Harness kind: the C ABI of the entry point and how inputs are made
  /// ("gemm", "rmsnorm", "softmax" or "definition", see docs/harness.md).
  std::string kind;
  /// Backend the sources are written for: "cpu", "cuda" or "hip". Devices
  /// of another kind do not evaluate the task ("sim" devices take any).
  std::string backend = "cpu";
  /// Element type of inputs and outputs, e.g. "float32" (definition tasks:
  /// the first output's; each tensor_arg has its own).
  std::string dtype;
  /// Absolute and relative tolerance: |a - b| <= atol + rtol * |ref|
  /// (definition tasks: the first output's; each output has its own), on
  /// every element or on the matched ratio of them, none further than
  /// max_error (0: no cap) from the reference.
  double atol = 0;
  double rtol = 0;
  double matched_ratio = 1;
  double max_error = 0;
  /// True (the default): the candidate's second run on the same inputs
  /// must repeat its first bit for bit. False allows atomics-level
  /// differences: the second run is checked against the reference instead.
  bool deterministic = true;
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
  /// Definition tasks: definition.json as written (FlashInfer-Bench's
  /// Definition, for people and agents), and the formulas of useful FLOPs
  /// and compulsory bytes per call over its axes. Empty for other kinds.
  std::string definition;
  std::string flops;
  std::string bytes;
  /// Kind tasks: the definition name that exported Solutions and Traces
  /// carry (runtime/trace_export.hpp), when it is not the task's name, so
  /// that a task that is not FlashInfer-Bench's definition of the same
  /// name (another dtype) cannot join its traces. Empty: the task's name.
  std::string trace_definition;
};
EAT_DESCRIBE(task_spec, name, kind, backend, dtype, atol, rtol, workloads,
  reference_source, baseline_source, families, description, expert_source,
  expert_libs, definition, flops, bytes, matched_ratio, max_error,
  deterministic, trace_definition)
// Added after event logs stored tasks: logs without them still decode.
EAT_DESCRIBE_OPTIONAL(
  task_spec, matched_ratio, max_error, deterministic, trace_definition)

} // namespace eat
