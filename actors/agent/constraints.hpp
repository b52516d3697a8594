// Constraints between a template's parameters, as task.toml declares them
// (`constraints = ["mc >= mr", "nr % simd_floats == 0"]`, docs/tasks.md):
// conditions that every valid instance meets, so that the builtin tuner
// never spends an evaluation on an instance the template's source rejects.
//
// A constraint is an expression over the family's parameters and the facts
// of the compile target (target_fact_names): integers, "quoted text",
// + - * / % (integer arithmetic, as C++ does it), comparisons == != < <= >
// >=, ! && || and parentheses. A parameter whose values are all integers is
// a number; any other is text, which only == and != take.
//
// Pure functions; any thread.

#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/task.hpp"

namespace eat {

/// Facts of a compile target by name, e.g. {"simd_floats": 16,
/// "vector_registers": 32} for a CPU whose compiler targets AVX-512. Where a
/// fact is absent, constraints naming it are not applied.
using target_facts = std::map<std::string, int64_t>;

/// The facts constraints may name besides parameters: "simd_floats" (floats
/// in one vector register) and "vector_registers" (vector registers the
/// compiler may use), as devices::cpu_target_facts derives them.
const std::vector<std::string>& target_fact_names();

/// Why `text` is not a valid constraint of `family`: a syntax error, an
/// unknown name, text used as a number or a result that is not true or
/// false, with the column, e.g. "unknown name 'nv' at column 5"; "" when it
/// is valid.
std::string check_constraint(
  std::string_view text, const template_family& family);

/// What a constraint says of one instance.
enum class constraint_verdict {
  /// The instance meets it.
  holds,
  /// The instance violates it.
  fails,
  /// It names a target fact that `facts` lacks, or cannot be evaluated
  /// (a division by zero, an overflow, an invalid constraint).
  unknown,
};

/// Evaluates `text` for `params`, an instance of `family`, on a target with
/// `facts`.
constraint_verdict evaluate_constraint(std::string_view text,
  const template_family& family, const param_map& params,
  const target_facts& facts);

/// What a family's constraints say together of one instance.
struct family_verdict {
  /// fails when one is violated; else unknown when one cannot say; else
  /// holds (also when the family declares none).
  constraint_verdict verdict = constraint_verdict::holds;
  /// The first constraint violated; "" unless verdict is fails.
  std::string violated;
};

/// Evaluates every constraint of `family` for `params` on a target with
/// `facts`.
family_verdict evaluate_constraints(const template_family& family,
  const param_map& params, const target_facts& facts);

/// The first of `family`'s constraints that `params` violates on a target
/// with `facts`; "" when none does (an unknown verdict violates nothing).
std::string violated_constraint(const template_family& family,
  const param_map& params, const target_facts& facts);

} // namespace eat
