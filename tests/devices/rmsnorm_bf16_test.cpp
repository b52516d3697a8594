// The CPU task of FlashInfer-Bench's bf16 rmsnorm (kernels/
// rmsnorm_h4096_bf16): its baseline and instances of its three template
// families agree with the reference through the CPU harness; called
// directly, the instances handle rows of any length, and the two ways of
// rounding to bf16 give the same bits; a kernel that divides by the sum
// of squares instead of their mean fails.

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "actors/agent/render.hpp"
#include "devices/kinds/dtype.hpp"
#include "runtime/task_file.hpp"
#include "tests/devices/on_cpu_checks.hpp"
#include "tests/devices/small_tasks.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using test::evaluate_source;
using test::family_of;
using test::instance_label;
using test::rmsnorm_line;

namespace {

const std::string name = "rmsnorm_h4096_bf16";

/// The task on 1 row and on 3 (a block of 2 rows and one left over; with
/// blocks of 4 or 8, every row left over).
task_spec small_rmsnorm(const scratch_dir& dir) {
  return test::small_task(name, {rmsnorm_line(1), rmsnorm_line(3)}, dir.path());
}

std::string instance(
  const task_spec& task, const std::string& family, const param_map& params) {
  auto source = render_template(family_of(task, family), params);
  REQUIRE(source);
  return *source;
}

/// Each element of `got` within bf16's tolerance of `expected`.
void check_close(
  const std::vector<uint16_t>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << bfloat16_to_float(got[i]) << ", reference "
                    << expected[i]);
    CHECK(std::fabs(bfloat16_to_float(got[i]) - expected[i])
          <= 1e-2 + 1e-2 * std::fabs(expected[i]));
  }
}

using entry = void (*)(const void* const*, void* const*, const int64_t*);
using reference_entry
  = void (*)(const void* const*, double* const*, const int64_t*);

/// `source` compiled as the CPU device compiles candidates (for this
/// machine's ISA, so that "cvtne" uses AVX-512 BF16 where it has it) and
/// called on `x` (batch × hidden) and `w`.
std::vector<uint16_t> run(const std::string& source,
  const std::vector<uint16_t>& x, const std::vector<uint16_t>& w,
  int64_t batch) {
  test::loaded_library library{source, {"-O3", "-march=native", "-std=c++17"}};
  auto kernel = reinterpret_cast<entry>(library.symbol("eat_kernel"));
  const int64_t hidden = static_cast<int64_t>(w.size());
  std::vector<uint16_t> out(x.size(), 0xffff);
  const void* in[] = {x.data(), w.data()};
  void* outs[] = {out.data()};
  const int64_t axes[] = {batch, hidden};
  kernel(in, outs, axes);
  return out;
}

} // namespace

TEST_CASE("the bf16 rmsnorm task runs FlashInfer-Bench's definition on the "
          "CPU with the GPU task's reference and workloads") {
  auto dir = test::make_temp_dir();
  auto task = small_rmsnorm(dir);
  CHECK(task.backend == "cpu");
  // Its traces carry the definition's name (docs/interop.md).
  CHECK(task.trace_definition.empty());
  CHECK(
    task.definition.find(R"("name": "rmsnorm_h4096")") != std::string::npos);
  auto full
    = load_task(std::filesystem::path{EAT_SOURCE_DIR} / "kernels", name);
  auto cuda = load_task(
    std::filesystem::path{EAT_SOURCE_DIR} / "kernels", "rmsnorm_h4096_cuda");
  REQUIRE(full);
  REQUIRE(cuda);
  CHECK(full->reference_source == cuda->reference_source);
  CHECK(full->workloads.size() == 14);
}

TEST_CASE("the bf16 rmsnorm baseline and instances of its three families "
          "agree with the reference") {
  auto dir = test::make_temp_dir();
  auto task = small_rmsnorm(dir);
  auto base = evaluate_source(task, task.baseline_source);
  INFO("baseline: " << base.detail << base.build_log);
  CHECK(base.status == eval_status::passed);
  // Each value of each parameter at least once, the widest steps and
  // blocks among them.
  const std::vector<std::pair<std::string, param_map>> instances = {
    {"vector",
      {{"width", "8"}, {"unroll", "1"}, {"round", "int"}, {"store", "plain"}}},
    {"vector", {{"width", "16"}, {"unroll", "8"}, {"round", "cvtne"},
                 {"store", "stream"}}},
    {"vector", {{"width", "8"}, {"unroll", "16"}, {"round", "cvtne"},
                 {"store", "plain"}}},
    {"widened",
      {{"width", "8"}, {"rows", "1"}, {"round", "int"}, {"store", "plain"}}},
    {"widened", {{"width", "16"}, {"rows", "2"}, {"round", "cvtne"},
                  {"store", "stream"}}},
    {"widened",
      {{"width", "16"}, {"rows", "8"}, {"round", "int"}, {"store", "plain"}}},
    {"paired",
      {{"unroll", "1"}, {"rows", "1"}, {"store", "plain"}, {"prefetch", "0"}}},
    {"paired",
      {{"unroll", "8"}, {"rows", "2"}, {"store", "stream"}, {"prefetch", "1"}}},
    {"paired",
      {{"unroll", "4"}, {"rows", "4"}, {"store", "plain"}, {"prefetch", "1"}}},
  };
  for (const auto& [family, params] : instances) {
    auto r = evaluate_source(task, instance(task, family, params));
    INFO(family << " " << instance_label(params) << ": " << r.detail
                << r.build_log);
    CHECK(r.status == eval_status::passed);
  }
}

TEST_CASE("bf16 rmsnorm instances handle rows of any length, and the "
          "integer and AVX-512 BF16 roundings give the same bits") {
  auto dir = test::make_temp_dir();
  auto task = small_rmsnorm(dir);
  // 5 rows of 37: a scalar tail after the vector steps (16 to 32
  // elements), and rows left over after blocks of 2 and 4.
  const int64_t batch = 5;
  const int64_t hidden = 37;
  std::mt19937 gen{7};
  std::uniform_real_distribution<float> dist{-1.0f, 1.0f};
  auto draw = [&](size_t n) {
    std::vector<uint16_t> v(n);
    for (auto& e : v)
      e = float_to_bfloat16(dist(gen));
    return v;
  };
  auto x = draw(batch * hidden);
  auto w = draw(hidden);
  test::loaded_library ref_library{task.reference_source};
  auto reference = reinterpret_cast<reference_entry>(
    ref_library.symbol("eat_kernel_reference"));
  std::vector<double> expected(x.size());
  const void* in[] = {x.data(), w.data()};
  double* outs[] = {expected.data()};
  const int64_t axes[] = {batch, hidden};
  reference(in, outs, axes);

  for (const auto& [family, params] :
    std::vector<std::pair<std::string, param_map>>{
      {"vector", {{"width", "8"}, {"unroll", "4"}, {"store", "plain"}}},
      {"vector", {{"width", "16"}, {"unroll", "2"}, {"store", "stream"}}},
      {"widened", {{"width", "16"}, {"rows", "4"}, {"store", "plain"}}},
      {"widened", {{"width", "8"}, {"rows", "2"}, {"store", "stream"}}}}) {
    auto with = [&](const std::string& round) {
      auto p = params;
      p["round"] = round;
      return run(instance(task, family, p), x, w, batch);
    };
    auto by_int = with("int");
    auto by_cvtne = with("cvtne");
    INFO(family << " " << instance_label(params));
    CHECK(by_int == by_cvtne);
    check_close(by_int, expected);
  }
  // paired: 32 elements a step, then a tail of 5; the next rows
  // prefetched, or not.
  for (const auto& params :
    std::vector<param_map>{
      {{"unroll", "1"}, {"rows", "4"}, {"store", "stream"}, {"prefetch", "1"}},
      {{"unroll", "2"}, {"rows", "1"}, {"store", "plain"},
        {"prefetch", "0"}}}) {
    INFO("paired " << instance_label(params));
    check_close(run(instance(task, "paired", params), x, w, batch), expected);
  }
}

TEST_CASE("a bf16 rmsnorm kernel that divides by the sum of squares instead "
          "of their mean is incorrect") {
  auto dir = test::make_temp_dir();
  auto task = small_rmsnorm(dir);
  auto wrong = test::edited(task.baseline_source,
    "sum / static_cast<float>(hidden) + eps", "sum + eps");
  auto r = evaluate_source(task, wrong);
  INFO(r.detail << r.build_log);
  CHECK(r.status == eval_status::incorrect);
  CHECK(r.detail.find("output[") != std::string::npos);
}
