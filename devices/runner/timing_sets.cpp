#include "devices/runner/timing_sets.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <unistd.h>

#if defined(__x86_64__)
#  include <immintrin.h>
#endif

namespace eat::devices {

namespace {

/// Seed stream of the input sets.
constexpr uint64_t set_stream = 1'000'000;

/// Parses a sysfs cache size such as "32768K" or "2M"; 0 if malformed.
uint64_t parse_cache_size(const std::string& text) {
  char* end = nullptr;
  auto n = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str())
    return 0;
  if (*end == 'K')
    return n << 10;
  if (*end == 'M')
    return n << 20;
  return n;
}

} // namespace

uint64_t last_level_cache_bytes() {
  uint64_t largest = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream in{"/sys/devices/system/cpu/cpu0/cache/index"
                     + std::to_string(i) + "/size"};
    std::string size;
    if (in >> size)
      largest = std::max(largest, parse_cache_size(size));
  }
  if (largest > 0)
    return largest;
  for (auto name : {_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE})
    if (auto n = ::sysconf(name); n > 0)
      largest = std::max(largest, static_cast<uint64_t>(n));
  return largest;
}

kernel_outputs::kernel_outputs(const problem& p) {
  for (const auto& t : p.outputs())
    outs.emplace_back(t.type, t.elements);
  for (auto& o : outs)
    pointers.push_back(o.data());
}

void kernel_outputs::poison_data() {
  for (auto& o : outs)
    o.poison_data();
}

rotation_plan plan_rotation(uint64_t llc_bytes) {
  constexpr uint64_t min_rotation_bytes = uint64_t{32} << 20;
  if (llc_bytes == 0)
    return {min_rotation_bytes, true};
  if (2 * llc_bytes > max_rotation_bytes)
    return {max_rotation_bytes, true};
  return {std::max(2 * llc_bytes, min_rotation_bytes), false};
}

uint64_t rotation_span(const rotation_plan& plan) {
  return plan.span_bytes == 0 ? plan.target_bytes
                              : std::min(plan.span_bytes, plan.target_bytes);
}

rotation_plan kernel_process_rotation(const rotation_plan& usual) {
  auto plan = usual;
  plan.span_bytes = std::min(rotation_span(usual), kernel_process_span_bytes);
  return plan;
}

void flush_from_caches(const void* p, size_t bytes) {
#if defined(__x86_64__)
  if (bytes == 0)
    return;
  const auto* c = static_cast<const char*>(p);
  for (size_t i = 0; i < bytes; i += line_bytes)
    _mm_clflush(c + i);
  _mm_clflush(c + bytes - 1);
  _mm_mfence();
#else
  (void) p;
  (void) bytes;
#endif
}

void flush_inputs(const input_set& set) {
  for (const auto& in : set.inputs)
    flush_from_caches(in.data(), in.bytes());
}

std::vector<input_set> make_sets(
  const problem& p, size_t count, uint64_t workload_seed) {
  std::vector<input_set> sets;
  sets.reserve(count);
  for (size_t s = 0; s < count; ++s) {
    auto inputs = p.make_inputs(
      input_style::random, derive_seed(workload_seed, set_stream + s));
    std::vector<const void*> pointers;
    for (const auto& buf : inputs)
      pointers.push_back(buf.data());
    sets.push_back(input_set{std::move(inputs), std::move(pointers),
      kernel_outputs{p}, kernel_outputs{p}});
  }
  return sets;
}

size_t set_count(uint64_t target, uint64_t memory_budget, uint64_t set_bytes,
  uint64_t footprint) {
  auto wanted = (target + set_bytes - 1) / set_bytes;
  auto affordable = std::max<uint64_t>(
    1, memory_budget / (footprint > 0 ? footprint : set_bytes));
  auto capped = std::min<uint64_t>(std::max<uint64_t>(2, wanted), max_sets);
  return static_cast<size_t>(std::min(capped, affordable));
}

bool flushes(const rotation_plan& plan, size_t count, uint64_t set_bytes) {
  return plan.flush_inputs || count * set_bytes < plan.target_bytes;
}

bool flushes_timed_calls(const rotation_plan& plan, size_t count,
  uint64_t set_bytes, bool drawn_each_round) {
  return drawn_each_round || flushes(plan, count, set_bytes);
}

uint64_t set_footprint(const problem& p) {
  // Per allocation: what malloc keeps beside an aligned block, at most.
  constexpr uint64_t overhead = 2 * line_bytes;
  // The set's vectors of buffers and pointers.
  constexpr uint64_t bookkeeping = 8 * line_bytes;
  auto allocated = [](uint64_t bytes) {
    return allocation_bytes(bytes) + overhead;
  };
  uint64_t total = bookkeeping;
  for (const auto& t : p.inputs())
    total += allocated(t.elements * size_of(t.type));
  for (const auto& t : p.outputs())
    total += 2 * allocated(t.elements * size_of(t.type)
                           + 2 * guarded_output::zone_bytes);
  return total;
}

round_sets sets_of_round(size_t round, size_t count) {
  auto candidate = round % count;
  return {(candidate + count / 2) % count, candidate};
}

round_sets sets_of_drawn_round(size_t round, size_t count) {
  auto candidate = round % count;
  return {(candidate + count - 1) % count, candidate};
}

void redraw_all(
  const problem& p, std::vector<input_set>& sets, secret_rng& gen) {
  for (auto& set : sets) {
    p.redraw(set.inputs, gen.next());
    ++set.generation;
  }
}

std::string check_set(const problem& p, const input_set& set) {
  bool comparable = set.candidate_generation != 0
                    && set.candidate_generation == set.baseline_generation;
  for (size_t o = 0; o < p.outputs().size(); ++o) {
    const auto& t = p.outputs()[o];
    if (!set.candidate_out.outs[o].zones_intact())
      return p.outputs().size() == 1
               ? "wrote outside its output buffer"
               : "wrote outside its output buffer '" + t.name + "'";
    if (!comparable)
      continue;
    auto cmp = compare_outputs(t.type, set.candidate_out.outs[o].data(),
      set.baseline_out.outs[o].data(), t.elements, t.tol.between_outputs());
    if (!cmp.ok)
      return "output differs from the baseline's on the same inputs: "
             + describe(cmp, p.element_name(o, cmp.index));
  }
  return {};
}

void complete_block(const problem& p, void* baseline,
  std::vector<input_set>& sets) {
  complete_block(sets, [&](input_set& set) {
    set.baseline_out.poison_data();
    p.call(baseline, set.pointers.data(), set.baseline_out.pointers.data());
  });
}

void complete_block(std::vector<input_set>& sets,
  const std::function<void(input_set&)>& call_baseline) {
  for (auto& set : sets) {
    if (set.candidate_generation != set.generation
        || set.baseline_generation == set.generation)
      continue;
    call_baseline(set);
    set.baseline_generation = set.generation;
  }
}

} // namespace eat::devices
