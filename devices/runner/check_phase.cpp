// The correctness phase of one workload (BENCHMARK-PROTOCOL.md section 2).

#include <algorithm>
#include <cstdio>

#include "devices/runner/checks.hpp"
#include "devices/runner/harness.hpp"

namespace eat::devices {

namespace {

std::vector<const float*> pointers_of(
  const std::vector<std::vector<float>>& buffers) {
  std::vector<const float*> result;
  for (const auto& buf : buffers)
    result.push_back(buf.data());
  return result;
}

/// Copies `values` into `buffers` element by element, keeping the buffers'
/// addresses: a kernel that caches results by pointer sees new contents at
/// old addresses and returns stale outputs.
void refill(std::vector<std::vector<float>>& buffers,
  const std::vector<std::vector<float>>& values) {
  for (size_t i = 0; i < buffers.size(); ++i)
    std::copy(values[i].begin(), values[i].end(), buffers[i].begin());
}

/// Calls the candidate once on a poisoned `out`, then checks what a single
/// call must not do: leave threads behind, touch its inputs, or write
/// outside its output.
check_outcome guarded_call(const harness_context& ctx,
  const std::vector<int64_t>& dims,
  const std::vector<std::vector<float>>& inputs, guarded_output& out) {
  auto ptrs = pointers_of(inputs);
  auto before = hash_buffers(inputs);
  out.poison();
  ctx.k->call(ctx.candidate, ptrs.data(), out.data(), dims.data());
  if (auto n = thread_count(); n > 1)
    return {eval_status::rejected,
      "hidden threads: " + std::to_string(n - 1)
        + " extra thread(s) still running after the call (a kernel "
          "must do its work on the calling thread)"};
  if (has_child_processes())
    return {eval_status::rejected, child_processes_text};
  if (hash_buffers(inputs) != before)
    return {eval_status::incorrect,
      "input mutated: the kernel wrote into its input buffers"};
  if (!out.zones_intact())
    return {eval_status::incorrect, "wrote outside its output buffer"};
  return {};
}

std::string bits_text(float x) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(x));
  return buf;
}

std::string case_name(uint32_t index, uint32_t random_cases) {
  if (index == random_cases)
    return "structured case (non-zero mean, large magnitude)";
  return "random case " + std::to_string(index + 1) + " of "
         + std::to_string(random_cases);
}

/// The buffers of one workload's check cases, reused case after case.
struct case_buffers {
  std::vector<std::vector<float>> inputs;
  guarded_output out;
  guarded_output again;
  std::vector<double> ref;

  explicit case_buffers(const buffer_sizes& sizes)
    : out(sizes.output), again(sizes.output), ref(sizes.output) {
    for (auto n : sizes.inputs)
      inputs.emplace_back(n);
  }
};

/// Returns why the task's baseline fails on the current case, or "".
std::string check_baseline(const harness_context& ctx,
  const std::vector<int64_t>& dims, case_buffers& bufs) {
  auto ptrs = pointers_of(bufs.inputs);
  bufs.again.poison();
  ctx.k->call(ctx.baseline, ptrs.data(), bufs.again.data(), dims.data());
  auto cmp = compare_outputs(
    bufs.again.data(), bufs.ref.data(), bufs.ref.size(), ctx.atol, ctx.rtol);
  if (cmp.ok)
    return {};
  return "the task's baseline disagrees with its reference: "
         + describe(cmp, ctx.k->element_name(cmp.index, dims));
}

/// Runs the candidate twice on the current case: the first output must
/// match the reference, the second must repeat the first bit for bit.
check_outcome check_case(const harness_context& ctx,
  const std::vector<int64_t>& dims, case_buffers& bufs) {
  const auto& k = *ctx.k;
  auto n = bufs.ref.size();
  if (auto call = guarded_call(ctx, dims, bufs.inputs, bufs.out);
      call.status != eval_status::passed)
    return call;
  auto cmp
    = compare_outputs(bufs.out.data(), bufs.ref.data(), n, ctx.atol, ctx.rtol);
  if (!cmp.ok)
    return {eval_status::incorrect,
      describe(cmp, k.element_name(cmp.index, dims)), cmp.max_abs_error};
  if (auto call = guarded_call(ctx, dims, bufs.inputs, bufs.again);
      call.status != eval_status::passed)
    return {call.status, call.detail, cmp.max_abs_error};
  auto diff = first_bitwise_difference(bufs.out.data(), bufs.again.data(), n);
  if (diff != n)
    return {eval_status::incorrect,
      "not deterministic: " + k.element_name(diff, dims) + " was "
        + bits_text(bufs.out.data()[diff]) + ", then "
        + bits_text(bufs.again.data()[diff]) + " on the same inputs",
      cmp.max_abs_error};
  return {eval_status::passed, {}, cmp.max_abs_error};
}

} // namespace

check_outcome check_workload(
  const harness_context& ctx, const workload& w, uint64_t workload_seed) {
  const auto& k = *ctx.k;
  auto dims = k.dims(w);
  case_buffers bufs{k.sizes(dims)};
  check_outcome result;
  auto random_cases = ctx.timing.check_seeds;
  for (uint32_t c = 0; c <= random_cases; ++c) {
    auto prefix
      = "workload " + w.name + ", " + case_name(c, random_cases) + ": ";
    auto style
      = c == random_cases ? input_style::offset_large : input_style::random;
    refill(
      bufs.inputs, k.make_inputs(dims, style, derive_seed(workload_seed, c)));
    auto ptrs = pointers_of(bufs.inputs);
    if (auto why = ctx.reference_code.unlock(); !why.empty())
      return {eval_status::runtime_error, prefix + "reference: " + why};
    k.call_reference(ctx.reference, ptrs.data(), bufs.ref.data(), dims.data());
    if (auto why = ctx.reference_code.lock(); !why.empty())
      return {eval_status::runtime_error, prefix + "reference: " + why};
    if (c == 0)
      if (auto why = check_baseline(ctx, dims, bufs); !why.empty())
        return {eval_status::rejected, prefix + why};
    auto outcome = check_case(ctx, dims, bufs);
    result.max_abs_error
      = std::max(result.max_abs_error, outcome.max_abs_error);
    if (outcome.status != eval_status::passed)
      return {outcome.status, prefix + outcome.detail, result.max_abs_error};
  }
  return result;
}

} // namespace eat::devices
