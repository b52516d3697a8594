// Specification of the fast uniform fill (devices/kinds/uniform_fill.hpp)
// that draws the timing sets' inputs anew at every block: values in the
// asked range, spread evenly over it, the same for the same seed and
// unrelated for another.

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "devices/kinds/problem.hpp"
#include "devices/kinds/uniform_fill.hpp"

using namespace eat::devices;

namespace {

/// A buffer of `count` elements of type `t` filled from `seed` in [lo, hi).
typed_buffer filled(
  dtype t, size_t count, double lo, double hi, uint64_t seed) {
  typed_buffer buf{t, count};
  fill_uniform(t, buf.data(), count, lo, hi, seed);
  return buf;
}

} // namespace

TEST_CASE("a uniform fill spreads its values evenly between lo and hi for "
          "each floating type") {
  constexpr size_t count = 100'000;
  constexpr int bins = 10;
  for (auto t : {dtype::float32, dtype::bfloat16, dtype::float16}) {
    INFO(to_string(t));
    auto buf = filled(t, count, -3.0, 5.0, 42);
    std::vector<size_t> histogram(bins);
    for (size_t i = 0; i < count; ++i) {
      auto x = buf.get(i);
      REQUIRE(x >= -3.0);
      // The narrow types round to nearest: the top may round up to hi.
      REQUIRE(x <= 5.0);
      auto bin = static_cast<int>((x + 3.0) / 8.0 * bins);
      ++histogram[static_cast<size_t>(bin < bins ? bin : bins - 1)];
    }
    // 10,000 expected a bin; 5 % is more than 15 standard deviations
    // (bfloat16's rounding moves bin edges by up to 1/64).
    for (auto n : histogram) {
      CHECK(n > 9'000);
      CHECK(n < 11'000);
    }
  }
}

TEST_CASE("a uniform fill of integers takes the floor") {
  auto buf = filled(dtype::int32, 1000, 2.0, 5.0, 3);
  std::vector<int> seen(3);
  for (size_t i = 0; i < buf.size(); ++i) {
    auto x = static_cast<int>(buf.get(i));
    REQUIRE(x >= 2);
    REQUIRE(x <= 4);
    ++seen[static_cast<size_t>(x - 2)];
  }
  for (auto n : seen)
    CHECK(n > 250);
}

TEST_CASE("a uniform fill repeats for its seed and differs for another") {
  auto a = filled(dtype::float32, 4096, -1, 1, 7);
  auto b = filled(dtype::float32, 4096, -1, 1, 7);
  auto c = filled(dtype::float32, 4096, -1, 1, 8);
  // Seeds that differ only in their high half.
  auto d = filled(dtype::float32, 4096, -1, 1, 7 + (uint64_t{1} << 32));
  CHECK(std::memcmp(a.data(), b.data(), a.bytes()) == 0);
  size_t same_c = 0;
  size_t same_d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    same_c += a.get(i) == c.get(i) ? 1 : 0;
    same_d += a.get(i) == d.get(i) ? 1 : 0;
  }
  CHECK(same_c < 3);
  CHECK(same_d < 3);
}
