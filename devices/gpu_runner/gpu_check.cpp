// The correctness phase of one workload on a GPU (BENCHMARK-PROTOCOL.md
// section 2): secret random cases and a structured one, a reference computed
// on the CPU in fp64, poisoned outputs with guard zones, inputs compared
// after every call, and a bit-identical second run.

#include <algorithm>
#include <cstdio>

#include "devices/gpu_runner/gpu_harness.hpp"
#include "actors/protocol/error.hpp"
#include "devices/runner/checks.hpp"

namespace eat::devices {

namespace {

std::string case_name(uint32_t index, uint32_t random_cases) {
  if (index == random_cases)
    return "structured case (non-zero mean, large magnitude)";
  return "random case " + std::to_string(index + 1) + " of "
         + std::to_string(random_cases);
}

std::string value_text(float x) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(x));
  return buf;
}

/// One workload's buffers, reused case after case.
struct case_state {
  problem_dims dims;
  std::vector<std::vector<float>> inputs;
  std::vector<double> ref;
  device_problem problem;
  std::vector<float> first;
  std::vector<float> second;
};

/// Calls `fn` on the poisoned output, then checks what one call must not
/// do: fail, leave threads behind, touch its inputs, write outside its
/// output. Leaves the downloaded output in `out`.
check_outcome guarded_call(const gpu_context& ctx, void* fn, case_state& s,
  std::vector<float>& out) {
  if (auto why = s.problem.poison(); !why.empty())
    return {eval_status::runtime_error, "cannot poison the output: " + why};
  if (auto why = call_on_device(ctx, fn, s.problem, s.dims); !why.empty())
    return {eval_status::runtime_error, why};
  if (ctx.allowed_threads > 0 && thread_count() > ctx.allowed_threads)
    return {eval_status::rejected,
      "hidden threads: " + std::to_string(thread_count() - ctx.allowed_threads)
        + " extra thread(s) still running after the call"};
  if (has_child_processes())
    return {eval_status::rejected, child_processes_text};
  auto same = s.problem.inputs_equal(s.inputs);
  if (!same)
    return {eval_status::runtime_error, render(same.error())};
  if (!*same)
    return {eval_status::incorrect,
      "input mutated: the kernel wrote into its input buffers"};
  if (auto why = s.problem.download(out); !why.empty())
    return {eval_status::runtime_error, why};
  if (!guard_zones_intact(out))
    return {eval_status::incorrect, "wrote outside its output buffer"};
  return {};
}

std::string check_baseline(gpu_context& ctx, case_state& s) {
  auto call = guarded_call(ctx, ctx.baseline, s, s.second);
  if (call.status != eval_status::passed)
    return "the task's baseline failed: " + call.detail;
  // The runtime has started its own threads by now; more are the
  // candidate's.
  ctx.allowed_threads = thread_count();
  auto cmp = compare_outputs(output_part(s.second), s.ref.data(), s.ref.size(),
    ctx.atol, ctx.rtol);
  if (cmp.ok)
    return {};
  return "the task's baseline disagrees with its reference: "
         + describe(cmp, ctx.k->element_name(cmp.index, s.dims));
}

check_outcome check_case(const gpu_context& ctx, case_state& s) {
  const auto& k = *ctx.k;
  auto n = s.ref.size();
  if (auto call = guarded_call(ctx, ctx.candidate, s, s.first);
      call.status != eval_status::passed)
    return call;
  auto cmp = compare_outputs(
    output_part(s.first), s.ref.data(), n, ctx.atol, ctx.rtol);
  if (!cmp.ok)
    return {eval_status::incorrect,
      describe(cmp, k.element_name(cmp.index, s.dims)), cmp.max_abs_error,
      cmp.max_rel_error};
  if (auto call = guarded_call(ctx, ctx.candidate, s, s.second);
      call.status != eval_status::passed)
    return {call.status, call.detail, cmp.max_abs_error, cmp.max_rel_error};
  auto diff
    = first_bitwise_difference(output_part(s.first), output_part(s.second), n);
  if (diff != n)
    return {eval_status::incorrect,
      "not deterministic: " + k.element_name(diff, s.dims) + " was "
        + value_text(output_part(s.first)[diff]) + ", then "
        + value_text(output_part(s.second)[diff]) + " on the same inputs",
      cmp.max_abs_error, cmp.max_rel_error};
  return {eval_status::passed, {}, cmp.max_abs_error, cmp.max_rel_error};
}

/// Draws case `c`, uploads it and computes its reference on the CPU.
std::string prepare_case(const gpu_context& ctx, case_state& s, uint32_t c,
  uint64_t workload_seed) {
  auto style = c == ctx.timing.check_seeds ? input_style::offset_large
                                           : input_style::random;
  s.inputs
    = ctx.k->make_inputs(s.dims, style, derive_seed(workload_seed, c));
  if (auto why = s.problem.upload(s.inputs); !why.empty())
    return why;
  std::vector<const float*> ptrs;
  for (const auto& buf : s.inputs)
    ptrs.push_back(buf.data());
  if (auto why = ctx.reference_code.unlock(); !why.empty())
    return "reference: " + why;
  ctx.k->call_reference(ctx.reference, ptrs.data(), s.ref.data(), s.dims.data());
  return ctx.reference_code.lock();
}

} // namespace

check_outcome check_gpu_workload(
  gpu_context& ctx, const workload& w, uint64_t workload_seed) {
  case_state s;
  s.dims = ctx.k->dims(w);
  auto sizes = ctx.k->sizes(s.dims);
  auto problem = device_problem::make(*ctx.api, sizes);
  if (!problem)
    return {eval_status::runtime_error, "workload " + w.name
                                          + ": cannot allocate its buffers: "
                                          + render(problem.error())};
  s.problem = std::move(*problem);
  s.ref.resize(sizes.output);
  check_outcome result;
  auto random_cases = ctx.timing.check_seeds;
  for (uint32_t c = 0; c <= random_cases; ++c) {
    auto prefix
      = "workload " + w.name + ", " + case_name(c, random_cases) + ": ";
    if (auto why = prepare_case(ctx, s, c, workload_seed); !why.empty())
      return {eval_status::runtime_error, prefix + why};
    if (c == 0)
      if (auto why = check_baseline(ctx, s); !why.empty())
        return {eval_status::rejected, prefix + why};
    auto outcome = check_case(ctx, s);
    result.max_abs_error
      = std::max(result.max_abs_error, outcome.max_abs_error);
    result.max_rel_error
      = std::max(result.max_rel_error, outcome.max_rel_error);
    if (outcome.status != eval_status::passed)
      return {outcome.status, prefix + outcome.detail, result.max_abs_error,
        result.max_rel_error};
  }
  return result;
}

} // namespace eat::devices
