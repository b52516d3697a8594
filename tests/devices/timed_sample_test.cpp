// Specification of the secret sample of timed calls compared with the
// reference after the timing (devices/runner/timed_sample.hpp): a uniform
// sample of every timed output, copied where no kernel can change it, held
// to the outputs' own tolerance.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "devices/kind.hpp"
#include "devices/runner/timed_sample.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// A 4x4 softmax with atol 1e-3 and rtol 0: one float32 output.
problem tiny_softmax() {
  workload w;
  w.name = "r4_c4";
  w.axes = {{"rows", 4}, {"cols", 4}};
  return problem::make(*find_kind("softmax"), w, tolerance{1e-3, 0});
}

/// A "reference" with the softmax ABI that answers 0.5 everywhere.
void answers_half(const float*, double* out, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows * cols; ++i)
    out[i] = 0.5;
}

void* answers_half_fn() {
  return reinterpret_cast<void*>(&answers_half);
}

/// Offers one call whose output is 0.5 but for element `index`, which is
/// 0.5 + `error`, and keeps it where the sample says.
void offer_one(timed_sample& sample, uint64_t r, size_t index, float error) {
  std::vector<float> x(16, 0.25f);
  std::vector<float> out(16, 0.5f);
  out[index] += error;
  const void* in[] = {x.data()};
  const void* outs[] = {out.data()};
  if (auto slot = sample.choose(r))
    sample.keep(*slot, in, outs);
}

} // namespace

TEST_CASE("the first timed outputs fill the sample, and each later one "
          "takes a slot only when its draw falls among the slots") {
  auto p = tiny_softmax();
  timed_sample sample{p, 3};
  CHECK(sample.choose(99) == size_t{0});
  CHECK(sample.choose(99) == size_t{1});
  CHECK(sample.choose(99) == size_t{2});
  // The 4th offer draws r in [0, 4): 0, 1 and 2 name a slot, 3 none.
  CHECK(sample.choose(2) == size_t{2});
  CHECK_FALSE(sample.choose(3).has_value());
  CHECK(sample.offered() == 5);
}

TEST_CASE("every timed output is kept with the same probability, early or "
          "late in the timing") {
  auto p = tiny_softmax();
  constexpr int trials = 20000;
  constexpr size_t offers = 20;
  constexpr size_t slots = 4;
  std::vector<int> kept(offers, 0);
  secret_rng gen;
  for (int t = 0; t < trials; ++t) {
    timed_sample sample{p, slots};
    std::vector<size_t> holder(slots, offers);
    for (size_t i = 0; i < offers; ++i)
      if (auto slot = sample.draw(gen))
        holder[*slot] = i;
    for (auto i : holder)
      ++kept[i];
  }
  // Each offer ends in the sample with probability 4 / 20: 4000 of 20000
  // trials, with a standard deviation of 57. A sample that kept the n-th
  // offer with probability 1 / n instead would keep the first ones every
  // time.
  for (size_t i = 0; i < offers; ++i) {
    INFO("offer " << i + 1);
    CHECK(kept[i] > 3600);
    CHECK(kept[i] < 4400);
  }
}

TEST_CASE("a kept output within the tolerance passes the reference, one "
          "beyond it fails, naming the timed output and the element") {
  auto p = tiny_softmax();
  timed_sample sample{p, 2};
  offer_one(sample, 0, 3, 0.5e-3f);
  CHECK(sample.check(p, answers_half_fn(), code_lock{}).empty());
  offer_one(sample, 0, 5, 1.5e-3f);
  CHECK(sample.kept() == 2);
  auto why = sample.check(p, answers_half_fn(), code_lock{});
  INFO(why);
  CHECK(contains(why, "timed output 2 of 2, one of a secret sample of 2 "
                      "compared with the reference"));
  CHECK(contains(why, "out[1][1] = 0.50150001 but expected 0.5"));
}

TEST_CASE("the sample keeps copies: a kernel that rewrites its outputs "
          "after they were kept changes nothing") {
  auto p = tiny_softmax();
  timed_sample sample{p, 1};
  std::vector<float> x(16, 0.25f);
  std::vector<float> out(16, 0.5f);
  out[0] = 2.0f;
  const void* in[] = {x.data()};
  const void* outs[] = {out.data()};
  sample.keep(*sample.choose(0), in, outs);
  out[0] = 0.5f;
  CHECK_FALSE(sample.check(p, answers_half_fn(), code_lock{}).empty());
}

TEST_CASE("a sample of no slots keeps nothing and checks nothing") {
  auto p = tiny_softmax();
  timed_sample sample{p, 0};
  secret_rng gen;
  for (int i = 0; i < 10; ++i)
    CHECK_FALSE(sample.draw(gen).has_value());
  CHECK(sample.offered() == 10);
  CHECK(sample.kept() == 0);
  CHECK(sample.check(p, answers_half_fn(), code_lock{}).empty());
}

TEST_CASE("a sample keeps as many calls as fit in its budget, at least one") {
  constexpr uint64_t mib = uint64_t{1} << 20;
  CHECK(sample_slots(4, mib, 1024 * mib) == 4);
  CHECK(sample_slots(4, 512 * mib, 1024 * mib) == 2);
  CHECK(sample_slots(4, 4096 * mib, 1024 * mib) == 1);
  CHECK(sample_slots(0, mib, 1024 * mib) == 0);
}
