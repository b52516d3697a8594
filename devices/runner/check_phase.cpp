// The correctness phase of one workload (BENCHMARK-PROTOCOL.md section 2),
// over typed buffers and every output of the problem.

#include <algorithm>
#include <cstdio>
#include <vector>

#include "devices/kinds/problem.hpp"
#include "devices/runner/checks.hpp"
#include "devices/runner/harness.hpp"
#include "devices/runner/secrets.hpp"

namespace eat::devices {

namespace {

std::string case_name(uint32_t index, uint32_t random_cases) {
  if (index == random_cases)
    return "structured case (non-zero mean, large magnitude)";
  return "random case " + std::to_string(index + 1) + " of "
         + std::to_string(random_cases);
}

/// One set of poisoned outputs and the pointers a call receives.
struct output_set {
  std::vector<guarded_output> outs;
  std::vector<void*> pointers;

  explicit output_set(const problem& p) {
    for (const auto& t : p.outputs())
      outs.emplace_back(t.type, t.elements);
    for (auto& o : outs)
      pointers.push_back(o.data());
  }

  void poison() {
    for (auto& o : outs)
      o.poison();
  }

  bool zones_intact() const {
    return std::all_of(outs.begin(), outs.end(), [](const guarded_output& o) {
      return o.zones_intact();
    });
  }
};

/// The buffers of one workload's check cases, reused case after case.
/// Inputs and outputs come from the installed arena when there is one
/// (the kernels' processes map it); the reference's outputs never do:
/// they are the answers, and a candidate that found them there could copy
/// them into its own outputs (a red-team softmax passed 1.13x so, wrong
/// on the structured case).
struct case_buffers {
  std::vector<typed_buffer> inputs;
  std::vector<const void*> in_ptrs;
  output_set out;
  output_set again;
  std::vector<std::vector<double>> ref;
  std::vector<double*> ref_ptrs;

  explicit case_buffers(const problem& p) : out(p), again(p) {
    for (const auto& t : p.inputs())
      inputs.emplace_back(t.type, t.elements);
    for (const auto& b : inputs)
      in_ptrs.push_back(b.data());
    for (const auto& t : p.outputs())
      ref.emplace_back(t.elements, 0.0);
    for (auto& r : ref)
      ref_ptrs.push_back(r.data());
  }
};

/// Calls the candidate once on poisoned outputs, then checks what a single
/// call must not do: leave threads behind, touch its inputs, or write
/// outside its outputs.
check_outcome guarded_call(const harness_context& ctx, const problem& p,
  case_buffers& bufs, output_set& outs) {
  // In a process of its own the candidate could forge hash_buffers'
  // unkeyed hash; the key never leaves the runner (secrets.hpp).
  auto hash = [&] {
    return ctx.candidate_host != nullptr ? keyed_hash(ctx.hash_key, bufs.inputs)
                                         : hash_buffers(bufs.inputs);
  };
  auto before = hash();
  outs.poison();
  // A baseline stopped by the candidate is the candidate's doing too:
  // rejected, as in the timing phase.
  if (auto call = call_kernel(ctx, kernel_role::candidate, p,
        bufs.in_ptrs.data(), outs.pointers.data());
      !call.error.empty())
    return {call.status, call.error};
  // In a process of its own, a kernel's threads run only within its calls
  // and it cannot start processes (kernel_host.hpp).
  if (ctx.candidate_host == nullptr) {
    if (auto n = thread_count(); n > 1)
      return {eval_status::rejected,
        "hidden threads: " + std::to_string(n - 1)
          + " extra thread(s) still running after the call (a kernel "
            "must do its work on the calling thread)"};
    if (has_child_processes())
      return {eval_status::rejected, child_processes_text};
  }
  if (hash() != before)
    return {eval_status::incorrect,
      "input mutated: the kernel wrote into its input buffers"};
  for (size_t o = 0; o < outs.outs.size(); ++o)
    if (!outs.outs[o].zones_intact())
      return {eval_status::incorrect,
        p.outputs().size() == 1
          ? "wrote outside its output buffer"
          : "wrote outside its output buffer '" + p.outputs()[o].name + "'"};
  return {};
}

/// Compares every output of `outs` with the reference; the first failure
/// wins, the largest errors are kept either way.
check_outcome compare_all(const problem& p, const output_set& outs,
  const std::vector<std::vector<double>>& ref) {
  check_outcome result;
  for (size_t o = 0; o < outs.outs.size(); ++o) {
    const auto& t = p.outputs()[o];
    auto cmp = compare_outputs(
      t.type, outs.outs[o].data(), ref[o].data(), t.elements, t.tol);
    result.max_abs_error = std::max(result.max_abs_error, cmp.max_abs_error);
    result.max_rel_error = std::max(result.max_rel_error, cmp.max_rel_error);
    if (!cmp.ok && result.status == eval_status::passed) {
      result.status = eval_status::incorrect;
      result.detail = describe(cmp, p.element_name(o, cmp.index));
    }
  }
  return result;
}

/// Returns why the task's baseline fails on the current case, or "".
std::string check_baseline(
  const harness_context& ctx, const problem& p, case_buffers& bufs) {
  bufs.again.poison();
  if (auto call = call_kernel(ctx, kernel_role::baseline, p,
        bufs.in_ptrs.data(), bufs.again.pointers.data());
      !call.error.empty())
    return call.error;
  auto cmp = compare_all(p, bufs.again, bufs.ref);
  // The baseline's answer to the case must not lie in the arena for the
  // candidate's calls to copy.
  bufs.again.poison();
  if (cmp.status == eval_status::passed)
    return {};
  return "the task's baseline disagrees with its reference: " + cmp.detail;
}

std::string value_text(double x) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.9g", x);
  return buf;
}

/// Returns why the two runs of the candidate differ, or "".
std::string first_difference(const problem& p, const case_buffers& bufs) {
  for (size_t o = 0; o < bufs.out.outs.size(); ++o) {
    const auto& a = bufs.out.outs[o];
    const auto& b = bufs.again.outs[o];
    auto n = a.size();
    auto diff
      = first_bitwise_difference(a.data(), b.data(), n, size_of(a.type()));
    if (diff != n)
      return "not deterministic: " + p.element_name(o, diff) + " was "
             + value_text(load_as_double(a.type(), a.data(), diff)) + ", then "
             + value_text(load_as_double(b.type(), b.data(), diff))
             + " on the same inputs";
  }
  return {};
}

/// Runs the candidate twice on the current case: the first outputs must
/// match the reference, the second must repeat the first bit for bit (a
/// task that allows atomics-level differences: match the reference too).
check_outcome check_case(
  const harness_context& ctx, const problem& p, case_buffers& bufs) {
  if (auto call = guarded_call(ctx, p, bufs, bufs.out);
      call.status != eval_status::passed)
    return call;
  auto cmp = compare_all(p, bufs.out, bufs.ref);
  if (cmp.status != eval_status::passed)
    return cmp;
  if (auto call = guarded_call(ctx, p, bufs, bufs.again);
      call.status != eval_status::passed)
    return {call.status, call.detail, cmp.max_abs_error, cmp.max_rel_error};
  if (!ctx.deterministic)
    return second_run(compare_all(p, bufs.again, bufs.ref), cmp);
  if (auto why = first_difference(p, bufs); !why.empty())
    return {eval_status::incorrect, why, cmp.max_abs_error, cmp.max_rel_error};
  return cmp;
}

} // namespace

check_outcome check_workload(
  const harness_context& ctx, const workload& w, uint64_t workload_seed) {
  auto p = problem::make(*ctx.k, w, ctx.tol);
  case_buffers bufs{p};
  check_outcome result;
  auto random_cases = ctx.timing.check_seeds;
  for (uint32_t c = 0; c <= random_cases; ++c) {
    auto prefix
      = "workload " + w.name + ", " + case_name(c, random_cases) + ": ";
    auto style
      = c == random_cases ? input_style::offset_large : input_style::random;
    // Drawn into the same buffers: a kernel that caches results by pointer
    // sees new contents at old addresses and returns stale outputs.
    p.fill_inputs(style, derive_seed(workload_seed, c), bufs.inputs);
    if (auto why = ctx.reference_code.unlock(); !why.empty())
      return {eval_status::runtime_error, prefix + "reference: " + why};
    p.call_reference(ctx.reference, bufs.in_ptrs.data(), bufs.ref_ptrs.data());
    if (auto why = ctx.reference_code.lock(); !why.empty())
      return {eval_status::runtime_error, prefix + "reference: " + why};
    if (c == 0)
      if (auto why = check_baseline(ctx, p, bufs); !why.empty())
        return {eval_status::rejected, prefix + why};
    auto outcome = check_case(ctx, p, bufs);
    result.max_abs_error
      = std::max(result.max_abs_error, outcome.max_abs_error);
    result.max_rel_error
      = std::max(result.max_rel_error, outcome.max_rel_error);
    if (outcome.status != eval_status::passed)
      return {outcome.status, prefix + outcome.detail, result.max_abs_error,
        result.max_rel_error};
  }
  if (auto why = idle_work_text(ctx); !why.empty())
    return {eval_status::rejected, "workload " + w.name + ": " + why,
      result.max_abs_error, result.max_rel_error};
  return result;
}

} // namespace eat::devices
