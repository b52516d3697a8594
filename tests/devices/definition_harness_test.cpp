// The typed, multi-output harness end to end on a definition task
// (tests/devices/fixtures/mini_decode: bf16 inputs, an int32 indptr and
// page ids, a float scalar, outputs in bfloat16, float32 and int32), and
// its parts: element types, generators, element names (docs/harness.md).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "devices/kind.hpp"
#include "devices/kinds/dtype.hpp"
#include "devices/kinds/problem.hpp"
#include "runtime/task_file.hpp"
#include "tests/devices/on_cpu_checks.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;

namespace {

const std::filesystem::path fixtures
  = std::filesystem::path{EAT_SOURCE_DIR} / "tests/devices/fixtures";

task_spec mini_decode() {
  auto task = load_task(fixtures, "mini_decode");
  if (!task)
    FAIL("cannot load mini_decode: " << render(task.error()));
  return std::move(*task);
}

/// The task's baseline with `from` replaced by `to`.
std::string variant(
  const task_spec& task, const std::string& from, const std::string& to) {
  auto text = task.baseline_source;
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

eval_result evaluate(const task_spec& task, const std::string& source) {
  return test::evaluate_source(task, source, 42);
}

} // namespace

TEST_CASE("a correct candidate passes a definition task with every output "
          "checked") {
  auto task = mini_decode();
  auto r = evaluate(task, task.baseline_source);
  INFO(r.detail);
  REQUIRE(r.status == eval_status::passed);
  REQUIRE(r.workloads.size() == 2);
  for (const auto& w : r.workloads) {
    CHECK(w.speedup > 0);
    // bfloat16 rounding of `out` shows in both error measures.
    CHECK(w.max_abs_error > 0);
    CHECK(w.max_rel_error > 0);
    CHECK(w.max_rel_error < 1e-2);
    CHECK(w.sol_fraction > 0);
  }
}

TEST_CASE("a wrong second output fails naming its element") {
  auto task = mini_decode();
  auto r = evaluate(
    task, variant(task, "lse[b] = top + std::log(sum);",
            "lse[b] = top + std::log(sum) + (b == 1 ? 0.01f : 0.0f);"));
  CHECK(r.status == eval_status::incorrect);
  CHECK_THAT(r.detail, Catch::Contains("lse[1] = "));
}

TEST_CASE("writing past one output is caught by its guard zone") {
  auto task = mini_decode();
  auto r = evaluate(task, variant(task, "  std::vector<float> logits;",
                            "  std::vector<float> logits;\n"
                            "  lse[batch] = 1.0f;"));
  CHECK(r.status == eval_status::incorrect);
  CHECK_THAT(
    r.detail, Catch::Contains("wrote outside its output buffer 'lse'"));
}

TEST_CASE("mutating the int32 indptr input is caught") {
  auto task = mini_decode();
  auto r = evaluate(task, variant(task, "  std::vector<float> logits;",
                            "  std::vector<float> logits;\n"
                            "  const_cast<int32_t*>(indptr)[0] = 0;\n"
                            "  const_cast<int32_t*>(indices)[0] ^= 1;"));
  CHECK(r.status == eval_status::incorrect);
  CHECK_THAT(r.detail, Catch::Contains("input mutated"));
}

TEST_CASE("an integer output left unwritten shows its poison sentinel") {
  auto task = mini_decode();
  auto r = evaluate(task, variant(task, "count[b] = end - begin;",
                            "if (b != 2) count[b] = end - begin;"));
  CHECK(r.status == eval_status::incorrect);
  CHECK_THAT(r.detail, Catch::Contains("count[2] was not written"));
}

TEST_CASE("an off-by-one integer output fails exactly") {
  auto task = mini_decode();
  auto r = evaluate(task, variant(task, "count[b] = end - begin;",
                            "count[b] = end - begin + (b == 0);"));
  CHECK(r.status == eval_status::incorrect);
  CHECK_THAT(r.detail, Catch::Contains("count[0] = "));
}

TEST_CASE("the fp32 kinds report the relative error too") {
  auto task = test::sgemm_task({test::gemm_workload(5, 7, 3)});
  auto work = test::make_temp_dir();
  auto dev = test::make_device(test::fast_options(work));
  auto r
    = dev->evaluate(task, test::make_candidate("c1", task.baseline_source), 3);
  INFO(r.detail);
  REQUIRE(r.status == eval_status::passed);
  // fp32 rounding against the fp64 reference: small, but reported.
  CHECK(r.workloads[0].max_rel_error > 0);
  CHECK(r.workloads[0].max_rel_error < 1e-4);
}

TEST_CASE("definition tasks pass the common checks on every backend") {
  auto task = mini_decode();
  CHECK(check_task(task).empty());
  for (auto backend : {"cuda", "hip"}) {
    task.backend = backend;
    CHECK(check_task(task).empty());
  }
}

TEST_CASE("indptr and permutation generators draw structured inputs") {
  auto task = mini_decode();
  const auto& w = task.workloads[1]; // batch 5, 64 pages, 64 indices
  auto p = problem::make(*find_kind("definition"), w, tolerance{0, 0});
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto in = p.make_inputs(input_style::random, seed);
    const auto& indptr = in[2];
    REQUIRE(indptr.type() == dtype::int32);
    REQUIRE(indptr.size() == 6);
    CHECK(indptr.get(0) == 0);
    CHECK(indptr.get(5) == 64);
    for (size_t i = 0; i + 1 < indptr.size(); ++i)
      CHECK(indptr.get(i + 1) - indptr.get(i) >= 1);
    std::set<double> ids;
    for (size_t i = 0; i < in[3].size(); ++i) {
      CHECK(in[3].get(i) >= 0);
      CHECK(in[3].get(i) < 64);
      ids.insert(in[3].get(i));
    }
    CHECK(ids.size() == 64); // a permutation of the pages
    CHECK(in[4].get(0) == Approx(0.125));
  }
  auto large = p.make_inputs(input_style::offset_large, 1);
  auto [lo, hi]
    = std::minmax({large[0].get(0), large[0].get(1), large[0].get(2)});
  CHECK(lo >= -2);
  CHECK(hi < 14);
}

TEST_CASE("inputs drawn into used buffers are the inputs new buffers get, at "
          "the same addresses") {
  auto task = mini_decode();
  auto rmsnorm = workload{"w", {{"batch", 3}, {"hidden", 40}}};
  for (auto [k, w] : {std::pair{find_kind("definition"), task.workloads[1]},
         std::pair{find_kind("rmsnorm"), rmsnorm}}) {
    INFO(k->name);
    auto p = problem::make(*k, w, tolerance{1e-4, 1e-4});
    auto used = p.make_inputs(input_style::offset_large, 1);
    std::vector<const void*> addresses;
    for (const auto& buf : used)
      addresses.push_back(buf.data());
    for (auto style : {input_style::random, input_style::offset_large}) {
      p.fill_inputs(style, 7, used);
      auto fresh = p.make_inputs(style, 7);
      REQUIRE(used.size() == fresh.size());
      for (size_t i = 0; i < used.size(); ++i) {
        CHECK(used[i].data() == addresses[i]);
        REQUIRE(used[i].bytes() == fresh[i].bytes());
        CHECK(
          std::memcmp(used[i].data(), fresh[i].data(), used[i].bytes()) == 0);
      }
    }
  }
}

TEST_CASE("definition outputs are named by their shape") {
  auto task = mini_decode();
  auto p = problem::make(
    *find_kind("definition"), task.workloads[0], tolerance{0, 0});
  CHECK(p.element_name(0, 15) == "out[1][7]");
  CHECK(p.element_name(1, 2) == "lse[2]");
  CHECK(element_name("x", {}, 0) == "x");
  CHECK(element_name("x", {2, 3, 4}, 23) == "x[1][2][3]");
  CHECK(p.set_bytes()
        == 2 * 3 * 8 + 2 * 40 * 8 + 4 * 4 + 4 * 25 + 4
             + 2 * (2 * 3 * 8 + 4 * 3 + 4 * 3));
}

TEST_CASE("bfloat16 and float16 round to nearest even and back exactly") {
  CHECK(float_to_bfloat16(1.0f) == 0x3f80);
  CHECK(bfloat16_to_float(0x3f80) == 1.0f);
  // 1 + 2^-8 is halfway between two bfloat16 values: rounds to even (1).
  CHECK(float_to_bfloat16(1.00390625f) == 0x3f80);
  CHECK(float_to_bfloat16(1.01171875f) == 0x3f82);
  CHECK(std::isnan(bfloat16_to_float(float_to_bfloat16(NAN))));
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(-2.5f) == 0xc100);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(1e6f) == 0x7c00);
  CHECK(float_to_half(0x1p-24f) == 0x0001);
  for (uint32_t bits = 0; bits < 0x7c00; bits += 7)
    CHECK(float_to_half(half_to_float(static_cast<uint16_t>(bits))) == bits);
  CHECK(std::isnan(
    half_to_float(static_cast<uint16_t>(poison_pattern(dtype::float16)))));
  CHECK(std::isnan(
    bfloat16_to_float(static_cast<uint16_t>(poison_pattern(dtype::bfloat16)))));
  CHECK(default_tolerance(dtype::bfloat16) == 1e-2);
  CHECK(default_tolerance(dtype::int64) == 0);
}
