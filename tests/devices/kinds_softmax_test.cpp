// Kind "softmax" (devices/kinds/softmax.cpp) and the softmax task's
// sources: the reference on hand-computed rows, the baseline and the
// templates through the CPU device, and an unstable softmax caught.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <dlfcn.h>

#include "devices/compiler.hpp"
#include "devices/kind.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

workload softmax_workload(int64_t rows, int64_t cols) {
  return {"r" + std::to_string(rows) + "_c" + std::to_string(cols),
    {{"rows", rows}, {"cols", cols}}};
}

task_spec softmax_task(std::vector<workload> workloads) {
  task_spec t;
  t.name = "softmax";
  t.kind = "softmax";
  t.dtype = "float32";
  t.atol = 1e-6;
  t.rtol = 1e-4;
  t.workloads = std::move(workloads);
  t.reference_source = read_source("kernels/softmax/reference.cpp");
  t.baseline_source = read_source("kernels/softmax/baseline.cpp");
  return t;
}

/// Softmax without subtracting the row maximum.
constexpr const char* unstable_softmax = R"(#include <cmath>
#include <cstdint>
extern "C" void eat_softmax(const float* x, float* out, int64_t rows,
                            int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    float sum = 0.0f;
    for (int64_t j = 0; j < cols; ++j)
      sum += std::exp(x[i * cols + j]);
    for (int64_t j = 0; j < cols; ++j)
      out[i * cols + j] = std::exp(x[i * cols + j]) / sum;
  }
})";

} // namespace

TEST_CASE("the softmax reference matches hand-computed rows") {
  auto dir = make_temp_dir();
  auto comp = compiler::make("g++", dir.path().string(), 120);
  REQUIRE(comp);
  auto built = comp->compile(read_source("kernels/softmax/reference.cpp"),
    {"-O2", "-std=c++17"}, "reference.cpp");
  REQUIRE(built);
  REQUIRE(built->ok);
  auto* handle = ::dlopen(built->so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  const auto& k = *find_kind("softmax");
  auto* fn = ::dlsym(handle, k.reference_entry);
  REQUIRE(fn != nullptr);
  // Row 0: e^0 : e^ln3 = 1 : 3. Row 1: equal logits far beyond exp's range.
  std::vector<float> x{0.0f, std::log(3.0f), 1000.0f, 1000.0f};
  std::vector<double> out(4, -1.0);
  const float* in[] = {x.data()};
  int64_t dims[] = {2, 2};
  k.call_reference(fn, in, out.data(), dims);
  CHECK(out[0] == Approx(0.25).epsilon(1e-7));
  CHECK(out[1] == Approx(0.75).epsilon(1e-7));
  CHECK(out[2] == 0.5);
  CHECK(out[3] == 0.5);
  ::dlclose(handle);
}

TEST_CASE("the softmax kind names its axes, buffers and costs") {
  const auto* k = find_kind("softmax");
  REQUIRE(k != nullptr);
  auto w = softmax_workload(3, 10);
  CHECK(k->check_workload(w).empty());
  CHECK(k->check_workload({"x", {{"rows", 3}}}).find("cols")
        != std::string::npos);
  auto d = k->dims(w);
  REQUIRE(d.axes == std::vector<int64_t>{3, 10});
  CHECK(k->sizes(d).inputs == std::vector<size_t>{30});
  CHECK(k->sizes(d).output == 30);
  CHECK(k->element_name(25, d) == "out[2][5]");
  CHECK(k->useful_flops(d) == 4.0 * 30);
  CHECK(k->compulsory_bytes(d) == 8.0 * 30);
}

TEST_CASE("the structured softmax case shifts rows beyond exp's range") {
  const auto& k = *find_kind("softmax");
  auto in = make_inputs(k, {3, 50}, input_style::offset_large, 3);
  auto row = [&](size_t r) {
    return std::minmax_element(in[0].begin() + static_cast<long>(r * 50),
      in[0].begin() + static_cast<long>(r * 50 + 50));
  };
  CHECK(*row(0).first > 89.0f);   // exp overflows fp32 everywhere
  CHECK(*row(1).second < -104.0f); // exp is 0 or denormal everywhere
  auto random = make_inputs(k, {3, 50}, input_style::random, 3);
  auto [lo, hi] = std::minmax_element(random[0].begin(), random[0].end());
  CHECK(*lo >= -8.0f);
  CHECK(*hi < 8.0f);
  CHECK(*hi - *lo > 8.0f);
}

TEST_CASE("the naive softmax baseline passes as a candidate") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = softmax_task({softmax_workload(3, 1000), softmax_workload(5, 17)});
  auto r = dev->evaluate(task, make_candidate("b", task.baseline_source), 5);
  INFO(r.detail << r.build_log);
  CHECK(r.status == eval_status::passed);
}

TEST_CASE("an unstable softmax (no max subtraction) is incorrect") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = softmax_task({softmax_workload(3, 64)});
  auto r = dev->evaluate(task, make_candidate("unstable", unstable_softmax), 5);
  CHECK(r.status == eval_status::incorrect);
  CHECK(r.detail.find("structured case") != std::string::npos);
}

TEST_CASE("every softmax template family passes on odd sizes") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  // 1001 floats: rows of one chunk start at every alignment, so chunked's
  // "stream" path runs its scalar head, vectors and scalar tail.
  auto task = softmax_task({softmax_workload(4, 4099), softmax_workload(3, 7),
    softmax_workload(5, 1001)});
  std::vector<std::string> sources{
    render_template("kernels/softmax/three_pass.cpp.in",
      {{"exp", "libm"}, {"lanes", "1"}, {"scale", "divide"}}),
    render_template("kernels/softmax/three_pass.cpp.in",
      {{"exp", "poly"}, {"lanes", "16"}, {"scale", "reciprocal"}}),
    render_template("kernels/softmax/online.cpp.in",
      {{"exp", "poly"}, {"block", "256"}, {"lanes", "16"}}),
    render_template("kernels/softmax/online.cpp.in",
      {{"exp", "libm"}, {"block", "16"}, {"lanes", "1"}}),
    render_template("kernels/softmax/vector.cpp.in",
      {{"width", "16"}, {"unroll", "4"}, {"degree", "4"}, {"output", "store"},
        {"store", "plain"}}),
    render_template("kernels/softmax/vector.cpp.in",
      {{"width", "8"}, {"unroll", "2"}, {"degree", "6"},
        {"output", "recompute"}, {"store", "stream"}}),
    render_template("kernels/softmax/chunked.cpp.in",
      {{"width", "16"}, {"unroll", "4"}, {"chunk", "512"}, {"degree", "4"},
        {"pow2", "scalef"}, {"short_rows", "in_place"},
        {"long_rows", "in_place"}, {"ahead", "0"}}),
    render_template("kernels/softmax/chunked.cpp.in",
      {{"width", "8"}, {"unroll", "2"}, {"chunk", "4096"}, {"degree", "6"},
        {"pow2", "bits"}, {"short_rows", "stream"}, {"long_rows", "recompute"},
        {"ahead", "0"}}),
    render_template("kernels/softmax/chunked.cpp.in",
      {{"width", "16"}, {"unroll", "4"}, {"chunk", "1024"}, {"degree", "5"},
        {"pow2", "scalef"}, {"short_rows", "stream"}, {"long_rows", "in_place"},
        {"ahead", "0"}}),
    // exp by vreduceps and vscalefps, chunks prefetched ahead in place
    // (rows of 7 and 1001 floats: past the input's end at the last row);
    // at width 8 "reduce" is the exponent-bits exp.
    render_template("kernels/softmax/chunked.cpp.in",
      {{"width", "16"}, {"unroll", "2"}, {"chunk", "1024"}, {"degree", "4"},
        {"pow2", "reduce"}, {"short_rows", "in_place"},
        {"long_rows", "in_place"}, {"ahead", "2"}}),
    render_template("kernels/softmax/chunked.cpp.in",
      {{"width", "16"}, {"unroll", "4"}, {"chunk", "512"}, {"degree", "6"},
        {"pow2", "reduce"}, {"short_rows", "stream"}, {"long_rows", "in_place"},
        {"ahead", "1"}}),
    render_template("kernels/softmax/chunked.cpp.in",
      {{"width", "8"}, {"unroll", "2"}, {"chunk", "2048"}, {"degree", "5"},
        {"pow2", "reduce"}, {"short_rows", "in_place"},
        {"long_rows", "recompute"}, {"ahead", "1"}}),
    // Rows of 4099 and 1001 floats are longer than 256: two passes, the
    // second's non-temporal stores from every alignment.
    render_template("kernels/softmax/chunked.cpp.in",
      {{"width", "16"}, {"unroll", "2"}, {"chunk", "256"}, {"degree", "4"},
        {"pow2", "scalef"}, {"short_rows", "stream"},
        {"long_rows", "recompute"}, {"ahead", "0"}}),
  };
  for (const auto& src : sources) {
    auto r = dev->evaluate(task, make_candidate("t", src), 9);
    INFO(src.substr(0, 300) << "\n" << r.detail << r.build_log);
    CHECK(r.status == eval_status::passed);
  }
}

TEST_CASE("the online softmax template rejects lanes that do not divide "
          "block") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = softmax_task({softmax_workload(2, 8)});
  auto src = render_template("kernels/softmax/online.cpp.in",
    {{"exp", "poly"}, {"block", "16"}, {"lanes", "32"}});
  auto r = dev->evaluate(task, make_candidate("t", src), 1);
  CHECK(r.status == eval_status::compile_error);
  CHECK(r.build_log.find("invalid combination:") != std::string::npos);
}

TEST_CASE("the chunked softmax template rejects prefetching ahead when no "
          "path is in place") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = softmax_task({softmax_workload(2, 8)});
  auto src = render_template("kernels/softmax/chunked.cpp.in",
    {{"width", "16"}, {"unroll", "2"}, {"chunk", "512"}, {"degree", "4"},
      {"pow2", "reduce"}, {"short_rows", "stream"}, {"long_rows", "recompute"},
      {"ahead", "1"}});
  auto r = dev->evaluate(task, make_candidate("t", src), 1);
  CHECK(r.status == eval_status::compile_error);
  CHECK(r.build_log.find("invalid combination: ahead") != std::string::npos);
}

TEST_CASE("the chunked softmax template stays exact when the row maximum "
          "grows in every chunk") {
  // 40 chunks of 512, each larger than the last: the running maximum rises
  // 40 times. In place, that is past the template's 32 segments, so the
  // exponentials already written are rescaled once in the middle of the
  // row; recomputed, the running sum is rescaled 40 times.
  // In place also with the reduce exp and chunks prefetched ahead; built
  // for this machine, as the harness builds, so that an AVX-512 machine
  // runs the vscalefps and vreduceps exps.
  const auto [long_rows, pow2, ahead] = GENERATE(
    table<std::string, std::string, std::string>({{"in_place", "scalef", "0"},
      {"in_place", "reduce", "2"}, {"recompute", "scalef", "0"}}));
  INFO("long_rows = " << long_rows << ", pow2 = " << pow2
                      << ", ahead = " << ahead);
  auto dir = make_temp_dir();
  auto comp = compiler::make("g++", dir.path().string(), 120);
  REQUIRE(comp);
  auto built = comp->compile(
    render_template("kernels/softmax/chunked.cpp.in",
      {{"width", "16"}, {"unroll", "2"}, {"chunk", "512"}, {"degree", "6"},
        {"pow2", pow2}, {"short_rows", "stream"}, {"long_rows", long_rows},
        {"ahead", ahead}}),
    {"-O2", "-march=native", "-std=c++17"}, "chunked.cpp");
  REQUIRE(built);
  INFO(built->log);
  REQUIRE(built->ok);
  auto* handle = ::dlopen(built->so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  using softmax_fn = void (*)(const float*, float*, int64_t, int64_t);
  auto fn = reinterpret_cast<softmax_fn>(::dlsym(handle, "eat_softmax"));
  REQUIRE(fn != nullptr);
  const int64_t rows = 2;
  const int64_t cols = 40 * 512 + 5;
  std::vector<float> x(rows * cols);
  for (int64_t j = 0; j < cols; ++j) {
    x[j] = 0.001f * static_cast<float>(j);                  // rising
    x[cols + j] = 0.001f * static_cast<float>(cols - j);   // falling
  }
  std::vector<float> out(x.size(), -1.0f);
  fn(x.data(), out.data(), rows, cols);
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = x.data() + i * cols;
    double max = *std::max_element(row, row + cols);
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j)
      sum += std::exp(row[j] - max);
    double worst = 0;
    for (int64_t j = 0; j < cols; ++j) {
      double ref = std::exp(row[j] - max) / sum;
      worst = std::max(worst, std::abs(out[i * cols + j] - ref)
                                / (1e-6 + 1e-4 * ref));
    }
    INFO("row " << i);
    CHECK(worst <= 1.0);
  }
  ::dlclose(handle);
}
