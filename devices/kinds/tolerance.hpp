// How close an output must come to its reference (BENCHMARK-PROTOCOL.md
// section 2): |got - ref| <= atol + rtol * |ref| on every element or, where a
// task sets a matched ratio below 1, on that fraction of the elements, with
// no element further than a maximum error from the reference.
//
// Plain values; usable from any thread.

#pragma once

#include <cstddef>
#include <string>

#include "actors/protocol/task.hpp"

namespace eat::devices {

struct tolerance {
  double atol = 0;
  double rtol = 0;
  /// Fraction of an output's elements that must lie within atol + rtol *
  /// |ref|; 1 (the default) means every element.
  double matched_ratio = 1;
  /// Largest |got - ref| allowed for any element; 0 means no cap. A matched
  /// ratio below 1 needs one (check_tolerance).
  double max_error = 0;

  /// How many of `n` elements may lie outside atol + rtol * |ref|.
  size_t allowed_mismatches(size_t n) const;

  /// The tolerance between two outputs (a candidate's and the baseline's,
  /// on the same inputs) that each meet this one against the reference:
  /// twice the errors, and room for the mismatches of both.
  tolerance between_outputs() const;
};

/// A task's tolerance (fp32 kinds; definition tasks: the first output's).
tolerance tolerance_of(const task_spec& task);

/// An output's tolerance (definition tasks).
tolerance tolerance_of(const tensor_arg& output);

/// Sets the tolerance fields of a task or of an output to `t`.
void set_tolerance(task_spec& task, const tolerance& t);
void set_tolerance(tensor_arg& output, const tolerance& t);

/// The matched ratio and the cap in words, to follow "|a - b| <= atol +
/// rtol * |ref|": e.g. " on at least 99 % of the elements, every element
/// within 0.5 of the reference"; "" for every element and no cap.
std::string ratio_text(const tolerance& t);

/// ratio_text of the task's tolerance, followed, for a task that allows
/// atomics-level differences between runs (task_spec::deterministic
/// false), by "; runs may differ (e.g. atomics), each within tolerance".
std::string task_tolerance_text(const task_spec& task);

/// Returns "" for a valid tolerance, otherwise why not, naming the field,
/// e.g. "matched_ratio 0.99 needs max_error (a cap on every element's
/// error)".
std::string check_tolerance(const tolerance& t);

} // namespace eat::devices
