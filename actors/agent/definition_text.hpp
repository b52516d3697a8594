// What an agent must know of a definition task (docs/tasks.md, "Definition
// tasks") beyond its workloads: the generic entry point and the FlashInfer-
// Bench definition that fixes the order of its inputs, outputs and axes.
// Both prompt engines (http: prompt.cpp; cli: workspace.cpp) append it to
// the workload list. Stateless; usable from any thread.

#pragma once

#include <string>

#include "actors/protocol/task.hpp"

namespace eat {

/// Returns the entry point and definition.json of a definition task, as
/// Markdown, or "" for a task of another kind.
inline std::string definition_text(const task_spec& t) {
  if (t.definition.empty())
    return {};
  std::string out
    = "\nThe kernel implements the FlashInfer-Bench definition below. Its "
      "entry point (destination passing):\n\n```cpp\nextern \"C\" void "
      "eat_kernel(const void* const* inputs, void* const* outputs, "
      "const int64_t* axes);\n```\n\n`inputs` and `outputs` follow the order "
      "of the definition's `inputs` and `outputs`; a scalar input points to "
      "one value; bfloat16 and float16 are stored as uint16_t bits; `axes` "
      "holds every axis value (const and var) in the order of `axes`.\n\n"
      "```json\n"
    + t.definition;
  if (out.back() != '\n')
    out += '\n';
  return out + "```\n";
}

} // namespace eat
