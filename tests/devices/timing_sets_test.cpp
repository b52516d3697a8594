// Specification of the timing phase's input-set schedule
// (devices/runner/timing_sets.hpp): cold inputs for both kernels, fresh
// contents for every call, and every candidate output compared.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices/kind.hpp"
#include "devices/runner/timing_sets.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;

namespace {

/// A 16x16 softmax: small sets, one float32 output.
problem small_problem() {
  workload w;
  w.name = "r16_c16";
  w.axes = {{"rows", 16}, {"cols", 16}};
  return problem::make(*find_kind("softmax"), w, tolerance{1e-6, 1e-4});
}

/// A "baseline" with the softmax ABI that writes 0.5 everywhere.
void halves(const float*, float* out, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows * cols; ++i)
    out[i] = 0.5f;
}

tensor_arg arg(std::string name, std::string dtype, std::vector<int64_t> shape) {
  tensor_arg a;
  a.name = std::move(name);
  a.dtype = std::move(dtype);
  a.shape = std::move(shape);
  return a;
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

TEST_CASE("with sets drawn one a round, the candidate takes them in order "
          "and the baseline has the set the candidate had the round before") {
  for (size_t n : {1u, 2u, 3u, 8u}) {
    for (size_t round = 0; round < 3 * n; ++round) {
      auto x = sets_of_drawn_round(round, n);
      CHECK(x.candidate == round % n);
      CHECK(x.baseline == (round + n - 1) % n);
      // The round before, the candidate had this baseline's set.
      if (round > 0)
        CHECK(sets_of_drawn_round(round - 1, n).candidate == x.baseline);
    }
  }
}

TEST_CASE("the rotation covers the last-level cache twice, within the "
          "memory budget") {
  CHECK(last_level_cache_bytes() > 0);
  CHECK(set_count(64u << 20, 1u << 30, 1u << 20) == 64);
  CHECK(set_count(64u << 20, 1u << 30, 100u << 20) == 2);
  CHECK(set_count(64u << 20, 8u << 20, 1u << 20) == 8);
  CHECK(set_count(64u << 20, 1u << 20, 4u << 20) == 1);
}

TEST_CASE("tiny sets rotate through at most max_sets, and a rotation cut "
          "short of its target flushes the timed calls' inputs") {
  constexpr uint64_t mib = uint64_t{1} << 20;
  // 1 KiB sets toward 128 MiB would be 131,072 of them.
  CHECK(set_count(128 * mib, uint64_t{1} << 30, 1024) == max_sets);
  CHECK(set_count(128 * mib, uint64_t{1} << 30, 32 * 1024) == max_sets);
  CHECK(set_count(128 * mib, uint64_t{1} << 30, 64 * 1024) == 2048);
  auto usual = plan_rotation(32 * mib);
  REQUIRE_FALSE(usual.flush_inputs);
  // Enough sets: no flush needed.
  CHECK_FALSE(flushes(usual, 64, mib));
  // Cut by max_sets: the inputs are flushed.
  CHECK(flushes(usual, max_sets, 1024));
  // Cut by the memory budget (two sets of 8 MiB): flushed too.
  CHECK(flushes(usual, 2, 8 * mib));
  // A plan that flushes always does.
  CHECK(flushes(plan_rotation(508 * mib), 1000, mib));
}

TEST_CASE("when each round draws the candidate's set anew, every timed "
          "call's inputs are flushed, however long the rotation") {
  constexpr uint64_t mib = uint64_t{1} << 20;
  auto usual = plan_rotation(32 * mib);
  REQUIRE_FALSE(flushes(usual, 64, mib));
  // Drawn per block, a long enough rotation keeps the inputs cold.
  CHECK_FALSE(flushes_timed_calls(usual, 64, mib, false));
  // Drawn just before the candidate's call, they are in the caches.
  CHECK(flushes_timed_calls(usual, 64, mib, true));
  CHECK(flushes_timed_calls(usual, max_sets, 1024, false));
  CHECK(flushes_timed_calls(usual, max_sets, 1024, true));
}

TEST_CASE("input sets rotate through twice the last-level cache up to "
          "128 MiB, and past that the timed calls' inputs are flushed") {
  constexpr uint64_t mib = uint64_t{1} << 20;
  auto small = plan_rotation(8 * mib);
  CHECK(small.target_bytes == 32 * mib);
  CHECK_FALSE(small.flush_inputs);
  auto usual = plan_rotation(32 * mib);
  CHECK(usual.target_bytes == 64 * mib);
  CHECK_FALSE(usual.flush_inputs);
  auto edge = plan_rotation(64 * mib);
  CHECK(edge.target_bytes == 128 * mib);
  CHECK_FALSE(edge.flush_inputs);
  // What a VM reported for its host's L3: a GiB of sets per workload.
  auto huge = plan_rotation(508 * mib);
  CHECK(huge.target_bytes == 128 * mib);
  CHECK(huge.flush_inputs);
  auto unknown = plan_rotation(0);
  CHECK(unknown.target_bytes == 32 * mib);
  CHECK(unknown.flush_inputs);
}

TEST_CASE("with kernel processes input sets span at most 8 MiB, and a "
          "rotation cut short by that has its timed calls' inputs flushed") {
  constexpr uint64_t mib = uint64_t{1} << 20;
  auto plan = kernel_process_rotation(plan_rotation(32 * mib));
  CHECK(plan.target_bytes == 64 * mib);
  CHECK_FALSE(plan.flush_inputs);
  CHECK(rotation_span(plan) == 8 * mib);
  // Sets of 1 MiB: eight of them, flushed.
  auto count = set_count(rotation_span(plan), uint64_t{1} << 30, mib);
  CHECK(count == 8);
  CHECK(flushes(plan, count, mib));
  // Sets of 40 MiB: two already exceed the target, and are not flushed.
  count = set_count(rotation_span(plan), uint64_t{1} << 30, 40 * mib);
  CHECK(count == 2);
  CHECK_FALSE(flushes(plan, count, 40 * mib));
  // Without kernel processes the span is the target.
  CHECK(rotation_span(plan_rotation(32 * mib)) == 64 * mib);
}

TEST_CASE("flushing a buffer from the caches keeps its contents") {
  std::vector<float> xs(10'000);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<float>(i) * 0.5f;
  flush_from_caches(xs.data(), xs.size() * sizeof(float));
  flush_from_caches(xs.data() + 3, 5);
  flush_from_caches(xs.data(), 0);
  for (size_t i = 0; i < xs.size(); ++i)
    REQUIRE(xs[i] == static_cast<float>(i) * 0.5f);
}

TEST_CASE("tiny sets are counted within the budget by the memory they take, "
          "not by their data") {
  // 1x1x1 sgemm: 16 bytes of data, but four buffers of a cache line or
  // more each.
  auto w = test::gemm_workload(1, 1, 1);
  auto p = problem::make(*find_kind("gemm"), w, tolerance{1e-4, 1e-4});
  CHECK(p.set_bytes() == 16);
  auto footprint = set_footprint(p);
  CHECK(footprint >= 4 * line_bytes);
  auto n = set_count(32u << 20, 1u << 30, p.set_bytes(), footprint);
  CHECK(n * footprint <= (1u << 30));
  CHECK(n < (1u << 30) / 16);
  // A page or more: whole pages, close to the data itself.
  auto big = problem::make(
    *find_kind("gemm"), test::gemm_workload(64, 64, 64), tolerance{1e-4, 1e-4});
  CHECK(set_footprint(big) >= big.set_bytes());
  CHECK(set_footprint(big) < 2 * big.set_bytes());
}

TEST_CASE("a redraw starts a new generation of every set's contents, in "
          "which no element is kept") {
  auto p = small_problem();
  auto sets = make_sets(p, 3, 11);
  std::vector<std::vector<float>> before;
  for (const auto& set : sets) {
    const auto* x = static_cast<const float*>(set.inputs[0].data());
    before.emplace_back(x, x + set.inputs[0].size());
  }
  secret_rng gen;
  redraw_all(p, sets, gen);
  for (size_t s = 0; s < sets.size(); ++s) {
    CHECK(sets[s].generation == 2);
    const auto* x = static_cast<const float*>(sets[s].inputs[0].data());
    size_t kept = 0;
    for (size_t i = 0; i < before[s].size(); ++i)
      kept += x[i] == before[s][i] ? 1 : 0;
    // 256 values of 23 random bits each: any kept is chance (p < 1e-4).
    CHECK(kept == 0);
  }
  // Each set has contents of its own.
  CHECK(std::memcmp(sets[0].inputs[0].data(), sets[1].inputs[0].data(),
          sets[0].inputs[0].bytes())
        != 0);
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

TEST_CASE("a redraw of an fp32 kind draws every input anew") {
  workload w;
  w.name = "m8_n8_k8";
  w.axes = {{"m", 8}, {"n", 8}, {"k", 8}};
  auto p = problem::make(*find_kind("gemm"), w, tolerance{1e-4, 1e-4});
  auto inputs = p.make_inputs(input_style::random, 5);
  auto before = inputs;
  p.redraw(inputs, 3);
  REQUIRE(inputs.size() == 2);
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t e = 0; e < inputs[i].size(); ++e) {
      CHECK(inputs[i].get(e) != before[i].get(e));
      CHECK(std::abs(inputs[i].get(e)) <= 1);
    }
}

TEST_CASE("a redraw draws every freely drawn floating input anew in its "
          "range, and keeps scalars and structured inputs") {
  workload w;
  w.inputs = {arg("q", "bfloat16", {64, 8}), arg("idx", "int32", {4}),
    arg("scale", "float32", {}), arg("w", "float16", {16})};
  w.inputs[1].generator = "permutation";
  w.inputs[2].scalar = true;
  w.inputs[2].value = 0.5;
  w.inputs[3].generator = "uniform";
  w.inputs[3].low = 10;
  w.inputs[3].high = 11;
  auto p = problem::make(*find_kind("definition"), w, tolerance{0, 0});
  std::vector<typed_buffer> inputs{typed_buffer{dtype::bfloat16, 512},
    typed_buffer{dtype::int32, 4}, typed_buffer{dtype::float32, 1},
    typed_buffer{dtype::float16, 16}};
  for (size_t e = 0; e < 4; ++e)
    inputs[1].set(e, static_cast<double>(3 - e));
  inputs[2].set(0, 0.5);
  p.redraw(inputs, 9);
  auto before = inputs;
  p.redraw(inputs, 4);
  size_t kept = 0;
  for (size_t e = 0; e < inputs[0].size(); ++e) {
    CHECK(inputs[0].get(e) >= -1);
    CHECK(inputs[0].get(e) <= 1);
    kept += inputs[0].get(e) == before[0].get(e) ? 1 : 0;
  }
  // bfloat16 has 8 significant bits: a few of 512 match by chance.
  CHECK(kept < 24);
  for (size_t e = 0; e < inputs[3].size(); ++e) {
    CHECK(inputs[3].get(e) >= 10);
    CHECK(inputs[3].get(e) <= 11);
  }
  CHECK(
    std::memcmp(inputs[3].data(), before[3].data(), inputs[3].bytes()) != 0);
  for (size_t e = 0; e < inputs[1].size(); ++e)
    CHECK(inputs[1].get(e) == before[1].get(e));
  CHECK(inputs[2].get(0) == 0.5);
}

TEST_CASE("the baseline and the candidate see one buffer layout: inputs at a "
          "page, outputs 64 bytes into one") {
  auto p = problem::make(
    *find_kind("gemm"), test::gemm_workload(64, 64, 64), tolerance{1e-4, 1e-4});
  auto sets = make_sets(p, 3, 11);
  auto offset = [](const void* x) {
    return reinterpret_cast<uintptr_t>(x) % page_bytes;
  };
  for (const auto& set : sets) {
    for (const auto* in : set.pointers)
      CHECK(offset(in) == 0);
    CHECK(offset(set.baseline_out.pointers[0]) == guarded_output::zone_bytes);
    CHECK(offset(set.candidate_out.pointers[0]) == guarded_output::zone_bytes);
  }
}

TEST_CASE("a freed buffer of a MiB or more is handed to the next one of its "
          "size or a little smaller, and a miss resizes a kept block") {
  // Sizes no other test asks for; whatever they kept is taken first.
  while (kept_blocks() > 0)
    typed_buffer{dtype::float32, 1'234'567};
  const void* first = nullptr;
  {
    typed_buffer big{dtype::float32, 1 << 18}; // 1 MiB
    first = big.data();
    std::fill_n(static_cast<float*>(big.data()), big.size(), 2.5f);
  }
  CHECK(kept_blocks() == 1);
  typed_buffer again{dtype::float32, 1 << 18};
  CHECK(again.data() == first);
  CHECK(kept_blocks() == 0);
  // Reused or not, a buffer starts zeroed.
  CHECK(again.get(0) == 0);
  CHECK(again.get(again.size() - 1) == 0);
  {
    typed_buffer two{dtype::float32, 1 << 19};  // 2 MiB
    typed_buffer four{dtype::float32, 1 << 20}; // 4 MiB
    std::fill_n(static_cast<float*>(four.data()), four.size(), 1.5f);
  }
  CHECK(kept_blocks() == 2);
  // A miss takes the smallest kept block up to half as large again, as it
  // is, and leaves the other kept; one larger than any grows the largest.
  const void* at = nullptr;
  {
    typed_buffer three{dtype::float32, 3 << 18}; // 3 MiB: the 4 MiB block
    at = three.data();
    CHECK(kept_blocks() == 1);
    CHECK(three.get(0) == 0);
    CHECK(three.get(three.size() - 1) == 0);
  }
  // Freed, it is kept whole: 4 MiB asks for it again.
  typed_buffer four{dtype::float32, 1 << 20};
  CHECK(four.data() == at);
  CHECK(kept_blocks() == 1);
  typed_buffer eight{dtype::float32, 1 << 21}; // 8 MiB: the 2 MiB block
  CHECK(kept_blocks() == 0);
  CHECK(eight.get(0) == 0);
  CHECK(eight.get(eight.size() - 1) == 0);
  std::fill_n(static_cast<float*>(eight.data()), eight.size(), 3.5f);
  CHECK(eight.get(eight.size() - 1) == 3.5);
  {
    typed_buffer sixteen{dtype::float32, 1 << 22}; // 16 MiB, new
  }
  // Far smaller than the one kept block, 1 MiB shrinks it.
  typed_buffer one{dtype::float32, 1 << 18};
  CHECK(kept_blocks() == 0);
  CHECK(one.get(one.size() - 1) == 0);
  { typed_buffer small{dtype::float32, 1000}; }
  CHECK(kept_blocks() == 0);
}

TEST_CASE("kept blocks give way to an allocation the address-space limit "
          "would refuse while they are held") {
  // In a child process: the limit stays there.
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    while (kept_blocks() > 0)
      typed_buffer{dtype::float32, 1'234'567};
    { // two 8 MiB blocks, kept when freed
      typed_buffer a{dtype::float32, 1 << 21};
      typed_buffer b{dtype::float32, 1 << 21};
    }
    if (kept_blocks() != 2)
      ::_exit(2);
    // Room for 10 MiB more: 24 MiB fits only once both kept blocks go.
    rlimit as{};
    ::getrlimit(RLIMIT_AS, &as);
    std::ifstream statm{"/proc/self/statm"};
    unsigned long pages = 0;
    statm >> pages;
    rlim_t limit = pages * page_bytes + (10 << 20);
    as.rlim_cur = limit;
    if (::setrlimit(RLIMIT_AS, &as) != 0)
      ::_exit(3);
    try {
      typed_buffer big{dtype::float32, 6 << 20}; // 24 MiB
      ::_exit(big.get(big.size() - 1) == 0 && kept_blocks() == 0 ? 0 : 4);
    } catch (const std::bad_alloc&) {
      ::_exit(5);
    }
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
