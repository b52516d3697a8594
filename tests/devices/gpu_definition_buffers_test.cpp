// Specification of the host-side pure functions behind the GPU harness's
// typed device buffers (devices/gpu_runner/gpu_problem.hpp): how each dtype
// is poisoned, how guard zones are recognised, and which input elements a
// timing round changes (and so copies to the device).

#include <catch2/catch.hpp>

#include <cstring>

#include "devices/gpu_runner/gpu_problem.hpp"
#include "devices/runner/checks.hpp"

using namespace eat;
using namespace eat::devices;

namespace {

tensor_arg arg(std::string name, std::string dtype, std::vector<int64_t> shape) {
  tensor_arg a;
  a.name = std::move(name);
  a.dtype = std::move(dtype);
  a.shape = std::move(shape);
  return a;
}

} // namespace

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
    auto cmp = compare_outputs(t, output_part(image), expected.data(), 4, 0, 0);
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

TEST_CASE("a timing round changes one element of each freely drawn floating "
          "input and says which") {
  workload w;
  w.inputs = {arg("q", "bfloat16", {4, 8}), arg("idx", "int32", {4}),
    arg("scale", "float32", {}), arg("w", "float16", {16})};
  w.inputs[1].generator = "permutation";
  w.inputs[2].scalar = true;
  w.inputs[2].value = 0.5;
  w.inputs[3].generator = "uniform";
  w.inputs[3].low = 10;
  w.inputs[3].high = 11;
  std::vector<typed_buffer> inputs{typed_buffer{dtype::bfloat16, 32},
    typed_buffer{dtype::int32, 4}, typed_buffer{dtype::float32, 1},
    typed_buffer{dtype::float16, 16}};
  inputs[2].set(0, 0.5);
  auto before = inputs;
  eat::devices::rng gen{7};
  auto changed = perturb_inputs(w, inputs, gen);
  REQUIRE(changed.size() == 2);
  CHECK(changed[0].first == 0);
  CHECK(changed[1].first == 3);
  CHECK(changed[0].second < 32);
  CHECK(changed[1].second < 16);
  auto w_value = inputs[3].get(changed[1].second);
  CHECK(w_value >= 10);
  CHECK(w_value <= 11);
  // Nothing else moved.
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t e = 0; e < inputs[i].size(); ++e)
      if (!(i == changed[0].first && e == changed[0].second)
          && !(i == changed[1].first && e == changed[1].second))
        CHECK(inputs[i].get(e) == before[i].get(e));
}

TEST_CASE("fp32 kinds perturb every input") {
  workload w; // no resolved inputs: an fp32 kind such as gemm
  std::vector<typed_buffer> inputs{
    typed_buffer{dtype::float32, 6}, typed_buffer{dtype::float32, 6}};
  eat::devices::rng gen{3};
  auto changed = perturb_inputs(w, inputs, gen);
  REQUIRE(changed.size() == 2);
  CHECK(changed[0].first == 0);
  CHECK(changed[1].first == 1);
  CHECK(inputs[0].get(changed[0].second) != 0);
}
