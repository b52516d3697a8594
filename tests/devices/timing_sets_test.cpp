// Specification of the timing phase's input-set schedule
// (devices/runner/timing_sets.hpp): cold inputs for both kernels, fresh
// contents for every call, and every candidate output compared.

#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "devices/kind.hpp"
#include "devices/runner/timing_sets.hpp"

using namespace eat;
using namespace eat::devices;

namespace {

/// A 16x16 softmax: small sets, one float32 output.
problem small_problem() {
  workload w;
  w.name = "r16_c16";
  w.axes = {{"rows", 16}, {"cols", 16}};
  return problem::make(*find_kind("softmax"), w, 1e-6, 1e-4);
}

/// A "baseline" with the softmax ABI that writes 0.5 everywhere.
void halves(const float*, float* out, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows * cols; ++i)
    out[i] = 0.5f;
}

/// Writes `value` into every element of the float output `out`.
void fill(kernel_outputs& out, float value) {
  auto* data = static_cast<float*>(out.pointers[0]);
  for (size_t i = 0; i < out.outs[0].size(); ++i)
    data[i] = value;
}

} // namespace

TEST_CASE("in every round the two kernels use different sets, half a "
          "rotation apart, and in a block each uses each set once") {
  for (size_t n : {2u, 3u, 8u, 9u}) {
    std::multiset<size_t> baseline, candidate;
    for (size_t round = 0; round < n; ++round) {
      auto x = sets_of_round(round, n);
      CHECK(x.baseline != x.candidate);
      CHECK((x.baseline + n - x.candidate) % n == n / 2);
      baseline.insert(x.baseline);
      candidate.insert(x.candidate);
    }
    for (size_t s = 0; s < n; ++s) {
      CHECK(baseline.count(s) == 1);
      CHECK(candidate.count(s) == 1);
    }
    CHECK(starts_block(0, n));
    CHECK(starts_block(n, n));
    CHECK_FALSE(starts_block(n - 1, n));
  }
  // One set (a tight memory budget): both kernels share it.
  CHECK(sets_of_round(5, 1).baseline == 0);
  CHECK(sets_of_round(5, 1).candidate == 0);
}

TEST_CASE("the rotation covers the last-level cache twice, within the "
          "memory budget") {
  CHECK(last_level_cache_bytes() > 0);
  CHECK(set_count(64u << 20, 1u << 30, 1u << 20) == 64);
  CHECK(set_count(64u << 20, 1u << 30, 100u << 20) == 2);
  CHECK(set_count(64u << 20, 8u << 20, 1u << 20) == 8);
  CHECK(set_count(64u << 20, 1u << 20, 4u << 20) == 1);
}

TEST_CASE("perturbing starts a new generation of every set's contents") {
  auto p = small_problem();
  auto sets = make_sets(p, 3, 11);
  auto contents = [&] {
    const auto& x = sets[1].inputs[0];
    const auto* bytes = static_cast<const unsigned char*>(x.data());
    return std::vector<unsigned char>(bytes, bytes + x.bytes());
  };
  auto before = contents();
  rng gen{5};
  perturb_all(p, sets, gen);
  for (const auto& set : sets)
    CHECK(set.generation == 2);
  CHECK(contents() != before);
}

TEST_CASE("a candidate output is compared only with a baseline output of the "
          "same contents, and the partial last block is completed untimed") {
  auto p = small_problem();
  auto sets = make_sets(p, 2, 3);
  auto& set = sets[0];
  // The candidate ran on generation 1, the baseline not yet: nothing to
  // compare, however wrong the candidate's output.
  fill(set.candidate_out, 0.5f);
  set.candidate_generation = 1;
  CHECK(check_set(p, set).empty());
  // The same generation on both sides: a mismatch is caught.
  fill(set.baseline_out, 0.25f);
  set.baseline_generation = 1;
  CHECK_THAT(check_set(p, set), Catch::Contains("differs from the baseline"));
  // A new block: the candidate ran on generation 2, the baseline did not.
  // Completing the block runs the baseline there, and only there.
  ++set.generation;
  set.candidate_generation = 2;
  complete_block(p, reinterpret_cast<void*>(&halves), sets);
  CHECK(set.baseline_generation == 2);
  CHECK(sets[1].baseline_generation == 0);
  CHECK(check_set(p, set).empty());
}
