// The correctness phase of one workload on a GPU (BENCHMARK-PROTOCOL.md
// section 2): secret random cases and a structured one drawn on the host
// by the generic problem, a reference computed on the CPU in fp64, poisoned
// outputs with guard zones, inputs compared after every call, and a
// bit-identical second run. Every output is compared with its own
// tolerances.

#include <algorithm>
#include <cstdio>

#include "actors/protocol/error.hpp"
#include "devices/gpu_runner/gpu_harness.hpp"
#include "devices/runner/checks.hpp"

namespace eat::devices {

namespace {

std::string case_name(uint32_t index, uint32_t random_cases) {
  if (index == random_cases)
    return "structured case (non-zero mean, large magnitude)";
  return "random case " + std::to_string(index + 1) + " of "
         + std::to_string(random_cases);
}

std::string value_text(dtype t, const void* data, size_t i) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.9g", load_as_double(t, data, i));
  return buf;
}

/// One workload's buffers, reused case after case.
struct case_state {
  problem p;
  std::vector<typed_buffer> inputs;
  std::vector<std::vector<double>> ref;
  device_problem buffers;
  std::vector<guarded_bytes> first;
  std::vector<guarded_bytes> second;
};

/// Calls `fn` on the poisoned outputs, then checks what one call must not
/// do: fail, leave threads behind, touch its inputs, write outside its
/// outputs. Leaves the downloaded outputs in `out`.
check_outcome guarded_call(const gpu_context& ctx, void* fn, case_state& s,
  std::vector<guarded_bytes>& out) {
  if (auto why = s.buffers.poison(); !why.empty())
    return {eval_status::runtime_error, "cannot poison the outputs: " + why};
  if (auto why = call_on_device(ctx, fn, s.buffers, s.p.dims()); !why.empty())
    return {eval_status::runtime_error, why};
  if (auto why = left_running(ctx); !why.empty())
    return {eval_status::rejected, why};
  auto same = s.buffers.inputs_equal(s.inputs);
  if (!same)
    return {eval_status::runtime_error, render(same.error())};
  if (!*same)
    return {eval_status::incorrect,
      "input mutated: the kernel wrote into its input buffers"};
  if (auto why = s.buffers.download(out); !why.empty())
    return {eval_status::runtime_error, why};
  for (size_t o = 0; o < out.size(); ++o)
    if (!guard_zones_intact(s.p.outputs()[o].type, out[o]))
      return {eval_status::incorrect, "wrote outside its output buffer '"
                                        + s.p.outputs()[o].name + "'"};
  return {};
}

/// Compares every output in `got` with the reference; the first failure,
/// or passed with the largest errors.
check_outcome against_reference(
  const case_state& s, const std::vector<guarded_bytes>& got) {
  check_outcome result;
  for (size_t o = 0; o < got.size(); ++o) {
    const auto& t = s.p.outputs()[o];
    auto cmp = compare_outputs(
      t.type, output_part(got[o]), s.ref[o].data(), t.elements, t.tol);
    result.max_abs_error = std::max(result.max_abs_error, cmp.max_abs_error);
    result.max_rel_error = std::max(result.max_rel_error, cmp.max_rel_error);
    if (!cmp.ok) {
      result.status = eval_status::incorrect;
      result.detail = describe(cmp, s.p.element_name(o, cmp.index));
      return result;
    }
  }
  return result;
}

std::string check_baseline(gpu_context& ctx, case_state& s) {
  auto call = guarded_call(ctx, ctx.baseline, s, s.second);
  if (call.status != eval_status::passed)
    return "the task's baseline failed: " + call.detail;
  // The runtime has started its own threads by now; more are the
  // candidate's.
  ctx.allowed_threads = thread_count();
  auto cmp = against_reference(s, s.second);
  if (cmp.status == eval_status::passed)
    return {};
  return "the task's baseline disagrees with its reference: " + cmp.detail;
}

/// "" if the two runs' outputs are bit-identical, else what differed.
std::string first_difference(const case_state& s) {
  for (size_t o = 0; o < s.first.size(); ++o) {
    const auto& t = s.p.outputs()[o];
    auto diff = first_bitwise_difference(output_part(s.first[o]),
      output_part(s.second[o]), t.elements, size_of(t.type));
    if (diff != t.elements)
      return "not deterministic: " + s.p.element_name(o, diff) + " was "
             + value_text(t.type, output_part(s.first[o]), diff) + ", then "
             + value_text(t.type, output_part(s.second[o]), diff)
             + " on the same inputs";
  }
  return {};
}

check_outcome check_case(const gpu_context& ctx, case_state& s) {
  if (auto call = guarded_call(ctx, ctx.candidate, s, s.first);
      call.status != eval_status::passed)
    return call;
  auto cmp = against_reference(s, s.first);
  if (cmp.status != eval_status::passed)
    return cmp;
  if (auto call = guarded_call(ctx, ctx.candidate, s, s.second);
      call.status != eval_status::passed)
    return {call.status, call.detail, cmp.max_abs_error, cmp.max_rel_error};
  if (!ctx.deterministic)
    return second_run(against_reference(s, s.second), cmp);
  if (auto why = first_difference(s); !why.empty())
    return {eval_status::incorrect, why, cmp.max_abs_error, cmp.max_rel_error};
  return cmp;
}

/// Draws case `c`, uploads it and computes its reference on the CPU.
std::string prepare_case(const gpu_context& ctx, case_state& s, uint32_t c,
  uint64_t workload_seed) {
  auto style = c == ctx.timing.check_seeds ? input_style::offset_large
                                           : input_style::random;
  s.p.fill_inputs(style, derive_seed(workload_seed, c), s.inputs);
  if (auto why = s.buffers.upload(s.inputs); !why.empty())
    return why;
  std::vector<const void*> in;
  for (const auto& buf : s.inputs)
    in.push_back(buf.data());
  std::vector<double*> out;
  for (auto& r : s.ref)
    out.push_back(r.data());
  if (auto why = ctx.reference_code.unlock(); !why.empty())
    return "reference: " + why;
  s.p.call_reference(ctx.reference, in.data(), out.data());
  return ctx.reference_code.lock();
}

} // namespace

check_outcome check_gpu_workload(
  gpu_context& ctx, const workload& w, uint64_t workload_seed) {
  case_state s;
  s.p = problem_of(ctx, w);
  auto buffers = device_problem::make(*ctx.api, s.p);
  if (!buffers)
    return {eval_status::runtime_error, "workload " + w.name
                                          + ": cannot allocate its buffers: "
                                          + render(buffers.error())};
  s.buffers = std::move(*buffers);
  for (const auto& t : s.p.inputs())
    s.inputs.emplace_back(t.type, t.elements);
  for (const auto& t : s.p.outputs())
    s.ref.emplace_back(t.elements);
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
