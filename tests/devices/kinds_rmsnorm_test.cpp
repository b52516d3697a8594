// Kind "rmsnorm" (devices/kinds/rmsnorm.cpp) and the rmsnorm_h4096 task's
// sources: the reference on hand-computed cases, the naive baseline and the
// templates through the CPU device, and wrong kernels caught.

#include <catch2/catch.hpp>

#include <cmath>

#include <dlfcn.h>

#include "devices/compiler.hpp"
#include "devices/kind.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

workload rmsnorm_workload(int64_t batch, int64_t hidden) {
  return {"b" + std::to_string(batch) + "_h" + std::to_string(hidden),
    {{"batch", batch}, {"hidden", hidden}}};
}

task_spec rmsnorm_task(std::vector<workload> workloads) {
  task_spec t;
  t.name = "rmsnorm_h4096";
  t.kind = "rmsnorm";
  t.dtype = "float32";
  t.atol = 1e-4;
  t.rtol = 1e-4;
  t.workloads = std::move(workloads);
  t.reference_source = read_source("kernels/rmsnorm_h4096/reference.cpp");
  t.baseline_source = read_source("kernels/rmsnorm_h4096/baseline.cpp");
  return t;
}

/// Renders a template of kernels/rmsnorm_h4096 by plain substitution.
/// A kernel like the baseline with `inverse` computing `inv` from `sum`.
std::string kernel_with(const std::string& inverse) {
  return R"(#include <cmath>
#include <cstdint>
extern "C" void eat_rmsnorm(const float* x, const float* w, float* out,
                            int64_t batch, int64_t hidden) {
  for (int64_t i = 0; i < batch; ++i) {
    float sum = 0.0f;
    for (int64_t j = 0; j < hidden; ++j)
      sum += x[i * hidden + j] * x[i * hidden + j];
    float inv = )" + inverse + R"(;
    for (int64_t j = 0; j < hidden; ++j)
      out[i * hidden + j] = x[i * hidden + j] * inv * w[j];
  }
})";
}

} // namespace

TEST_CASE("the rmsnorm reference matches hand-computed rows") {
  auto dir = make_temp_dir();
  auto comp = compiler::make("g++", dir.path().string(), 120);
  REQUIRE(comp);
  auto built = comp->compile(read_source("kernels/rmsnorm_h4096/reference.cpp"),
    {"-O2", "-std=c++17"}, "reference.cpp");
  REQUIRE(built);
  REQUIRE(built->ok);
  auto* handle = ::dlopen(built->so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  const auto& k = *find_kind("rmsnorm");
  auto* fn = ::dlsym(handle, k.reference_entry);
  REQUIRE(fn != nullptr);
  // Row 0: mean square (9 + 16) / 2 = 12.5; row 1 is zero.
  std::vector<float> x{3, 4, 0, 0};
  std::vector<float> w{1, 2};
  std::vector<double> out(4, -1.0);
  const float* in[] = {x.data(), w.data()};
  int64_t dims[] = {2, 2};
  k.call_reference(fn, in, out.data(), dims);
  auto inv = 1.0 / std::sqrt(12.5 + 1e-5);
  CHECK(out[0] == Approx(3 * inv).epsilon(1e-12));
  CHECK(out[1] == Approx(8 * inv).epsilon(1e-12));
  CHECK(out[2] == 0.0);
  CHECK(out[3] == 0.0);
  ::dlclose(handle);
}

TEST_CASE("the rmsnorm kind names its axes, buffers and costs") {
  const auto* k = find_kind("rmsnorm");
  REQUIRE(k != nullptr);
  CHECK(std::string{k->entry} == "eat_rmsnorm");
  auto w = rmsnorm_workload(3, 4096);
  CHECK(k->check_workload(w).empty());
  CHECK(k->check_workload({"x", {{"batch", 3}}}).find("hidden")
        != std::string::npos);
  CHECK(k->check_workload({"x", {{"batch", 0}, {"hidden", 4}}}).find("batch")
        != std::string::npos);
  auto d = k->dims(w);
  REQUIRE(d.axes == std::vector<int64_t>{3, 4096});
  auto s = k->sizes(d);
  CHECK(s.inputs == std::vector<size_t>{3 * 4096, 4096});
  CHECK(s.output == 3 * 4096);
  CHECK(k->element_name(4097, d) == "out[1][1]");
  CHECK(k->useful_flops(d) == 4.0 * 3 * 4096);
  CHECK(k->compulsory_bytes(d) == 4.0 * (2 * 3 * 4096 + 4096));
}

TEST_CASE("rmsnorm inputs hold rows far below eps") {
  const auto& k = *find_kind("rmsnorm");
  auto in = make_inputs(k, {4, 64}, input_style::random, 7);
  REQUIRE(in.size() == 2);
  auto mean_square = [&](size_t row) {
    double s = 0;
    for (size_t j = 0; j < 64; ++j)
      s += in[0][row * 64 + j] * in[0][row * 64 + j];
    return s / 64;
  };
  CHECK(mean_square(1) < 1e-5 / 10);
  CHECK(mean_square(0) > 1e-2);
  for (auto w : in[1])
    CHECK((w >= 0.5f && w < 1.5f));
}

TEST_CASE("the naive rmsnorm baseline passes as a candidate") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = rmsnorm_task({rmsnorm_workload(1, 4096), rmsnorm_workload(7, 33)});
  auto r = dev->evaluate(task, make_candidate("b", task.baseline_source), 5);
  INFO(r.detail << r.build_log);
  CHECK(r.status == eval_status::passed);
}

TEST_CASE("every rmsnorm template family passes on odd sizes") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = rmsnorm_task({rmsnorm_workload(5, 4096), rmsnorm_workload(3, 37)});
  std::vector<std::string> sources{
    render_template("kernels/rmsnorm_h4096/two_pass.cpp.in",
      {{"lanes", "1"}, {"row_block", "1"}}),
    render_template("kernels/rmsnorm_h4096/two_pass.cpp.in",
      {{"lanes", "16"}, {"row_block", "4"}}),
    render_template("kernels/rmsnorm_h4096/vector.cpp.in",
      {{"width", "16"}, {"unroll", "4"}, {"store", "stream"}}),
    render_template("kernels/rmsnorm_h4096/vector.cpp.in",
      {{"width", "4"}, {"unroll", "1"}, {"store", "plain"}}),
    render_template("kernels/rmsnorm_h4096/aligned.cpp.in",
      {{"width", "16"}, {"unroll", "2"}, {"align", "peel"}, {"pipeline", "1"},
        {"store", "stream"}}),
    render_template("kernels/rmsnorm_h4096/aligned.cpp.in",
      {{"width", "8"}, {"unroll", "1"}, {"align", "none"}, {"pipeline", "0"},
        {"store", "plain"}}),
    render_template("kernels/rmsnorm_h4096/row_block.cpp.in",
      {{"width", "8"}, {"rows", "4"}, {"chunk", "8"}, {"store", "plain"}}),
  };
  for (const auto& src : sources) {
    auto r = dev->evaluate(task, make_candidate("t", src), 9);
    INFO(src.substr(0, 400) << "\n" << r.detail << r.build_log);
    CHECK(r.status == eval_status::passed);
  }
}

TEST_CASE("an rmsnorm without eps is incorrect") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = rmsnorm_task({rmsnorm_workload(4, 256)});
  auto r = dev->evaluate(task,
    make_candidate("no-eps", kernel_with("1.0f / std::sqrt(sum / hidden)")),
    5);
  CHECK(r.status == eval_status::incorrect);
  CHECK(r.detail.find("out[1]") != std::string::npos);
}

TEST_CASE("an rmsnorm with the wrong mean is incorrect") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = rmsnorm_task({rmsnorm_workload(4, 256)});
  auto r = dev->evaluate(task,
    make_candidate("sum", kernel_with("1.0f / std::sqrt(sum / (hidden - 1) "
                                      "+ 1e-5f)")),
    5);
  CHECK(r.status == eval_status::incorrect);
}
