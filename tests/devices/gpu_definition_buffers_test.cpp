// Specification of the host-side pure functions behind the GPU harness's
// typed device buffers (devices/gpu_runner/gpu_problem.hpp): how each dtype
// is poisoned and how guard zones are recognised. What a timing round
// draws anew is problem::redraw's, specified in tests/devices/
// timing_sets_test.cpp.

#include <catch2/catch.hpp>

#include <cstring>

#include "devices/gpu_runner/gpu_problem.hpp"
#include "devices/runner/checks.hpp"

using namespace eat;
using namespace eat::devices;

TEST_CASE("floating outputs are poisoned with 0xff bytes, a NaN of every "
          "width") {
  for (auto t : {dtype::float32, dtype::float16, dtype::bfloat16}) {
    CHECK(poisoned_by_memset(t));
    auto image = poison_image(t, 3);
    REQUIRE(image.size() == 3 * size_of(t) + 2 * gpu_guard_bytes);
    for (auto b : image)
      CHECK(b == std::byte{0xff});
    for (size_t i = 0; i < 3; ++i)
      CHECK(std::isnan(load_as_double(t, output_part(image), i)));
  }
}

TEST_CASE("integer outputs carry the CPU harness's sentinel, which comparison "
          "reports as not written") {
  for (auto t : {dtype::int32, dtype::int64}) {
    CHECK_FALSE(poisoned_by_memset(t));
    auto image = poison_image(t, 4);
    std::vector<double> expected(4, 1.0);
    auto cmp
      = compare_outputs(t, output_part(image), expected.data(), 4, tolerance{});
    CHECK_FALSE(cmp.ok);
    CHECK(cmp.reason == "not written");
    uint64_t bits = 0;
    std::memcpy(&bits, output_part(image), size_of(t));
    CHECK(bits == poison_pattern(t));
  }
}

TEST_CASE("guard zones are intact until a byte next to the output changes") {
  for (auto t : {dtype::float16, dtype::int32}) {
    auto image = poison_image(t, 10);
    CHECK(guard_zones_intact(t, image));
    // Writing the output itself leaves the zones alone.
    std::memset(image.data() + gpu_guard_bytes, 0, 10 * size_of(t));
    CHECK(guard_zones_intact(t, image));
    auto before = image;
    before[gpu_guard_bytes - 1] = std::byte{0};
    CHECK_FALSE(guard_zones_intact(t, before));
    auto after = image;
    after[gpu_guard_bytes + 10 * size_of(t)] = std::byte{0};
    CHECK_FALSE(guard_zones_intact(t, after));
    auto far = image;
    far.back() = std::byte{1};
    CHECK_FALSE(guard_zones_intact(t, far));
  }
  CHECK_FALSE(guard_zones_intact(dtype::float32, guarded_bytes(100)));
}
