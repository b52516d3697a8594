// Specification of the speed-of-light gate: the peaks a CPU device measures,
// T_SOL of a workload, and which runs the gate rejects (devices/cpu_peak.hpp,
// devices/scoring.hpp). The end-to-end case is in hostile_candidates_test.cpp.

#include <cmath>

#include <sched.h>

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "devices/cpu_device.hpp"
#include "devices/cpu_peak.hpp"
#include "devices/kind.hpp"
#include "devices/scoring.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// A passed run of the default sgemm workloads with the given medians.
scored_run passed_run(double first_ns, double second_ns) {
  scored_run run;
  run.status = eval_status::passed;
  run.geomean_speedup = 2;
  for (double ns : {first_ns, second_ns}) {
    workload_result w;
    w.status = eval_status::passed;
    w.candidate_median_ns = ns;
    w.speedup = 2;
    run.workloads.push_back(w);
  }
  return run;
}

/// 1 GFLOP/s and 1 GB/s: T_SOL in ns equals max(FLOPs, bytes).
constexpr cpu_peak one_giga{1e9, 1e9};

} // namespace

TEST_CASE("the peak probe measures positive FLOP and byte rates on a core") {
  auto core = resolve_core(-1);
  REQUIRE(core);
  auto peak = measure_cpu_peak(*core);
  REQUIRE(peak);
  // Any CPU that runs eat does more than 10^8 FLOP/s and 10^8 B/s; the
  // safety factor only raises the figures.
  CHECK(peak->flops_per_s > 1e8);
  CHECK(peak->bytes_per_s > 1e8);
  CHECK(cpu_peak_safety_factor >= 2);
}

TEST_CASE("every chain of the FMA probe reaches its result, so none is "
          "dropped as dead code") {
  // Before, only the first chain reached the result: the compiler dropped
  // the other 11 and the probe timed one dependent chain, which read 1.5 x
  // the core's real FMA throughput on a Zen 5 core.
  const long trips = 5;
  auto run = run_fma_probe(trips);
  REQUIRE((run.lanes == 1 || run.lanes == 8 || run.lanes == 16));
  double expected = 0;
  for (int c = 0; c < fma_chains; ++c) {
    float x = fma_chain_start(c);
    for (long t = 0; t < trips; ++t)
      x = std::fma(x, fma_mul, fma_add);
    expected += run.lanes * static_cast<double>(x);
  }
  // The scalar code may round the multiply and the add separately.
  CHECK(run.checksum == Approx(expected).epsilon(1e-6));
  CHECK(run.flops == 2.0 * run.lanes * fma_chains * trips);
}

TEST_CASE("the peak probe refuses a core this process may not use") {
  auto peak = measure_cpu_peak(CPU_SETSIZE - 1);
  if (resolve_core(CPU_SETSIZE - 1))
    SUCCEED("this machine has every core; nothing to refuse");
  else
    CHECK(!peak);
}

TEST_CASE("gemm counts 2mnk useful FLOPs and 4(mk + kn + mn) compulsory "
          "bytes") {
  const auto* k = find_kind("gemm");
  REQUIRE(k != nullptr);
  std::vector<int64_t> dims{37, 23, 29};
  CHECK(k->useful_flops(dims) == 2.0 * 37 * 23 * 29);
  CHECK(k->compulsory_bytes(dims) == 4.0 * (37 * 29 + 29 * 23 + 37 * 23));
}

TEST_CASE("T_SOL is the larger of the compute time and the memory time") {
  CHECK(speed_of_light_ns(one_giga, 1000, 10) == Approx(1000));
  CHECK(speed_of_light_ns(one_giga, 10, 5000) == Approx(5000));
  CHECK(speed_of_light_ns({2e9, 1e9}, 4000, 1000) == Approx(2000));
}

TEST_CASE("the gate rejects a run whose median beats T_SOL on a workload") {
  auto task = sgemm_task();
  const auto* k = find_kind("gemm");
  // Workload 2 (48^3): T_SOL = 2 * 48^3 ns = 221184 ns at 1 GFLOP/s.
  auto run = apply_speed_of_light(
    passed_run(1e9, 1000), *k, task.workloads, one_giga,
    cpu_peak_safety_factor);
  INFO(run.detail);
  CHECK(run.status == eval_status::rejected);
  CHECK(run.detail
        == "faster than the speed of light on m48_n48_k48: median 1000 ns "
           "< T_SOL 2.212e+05 ns");
  CHECK(run.workloads[0].status == eval_status::passed);
  CHECK(run.workloads[1].status == eval_status::rejected);
  CHECK(run.workloads[1].detail == run.detail);
  CHECK(run.geomean_speedup == 0);
}

TEST_CASE("the gate passes a run no faster than light, and leaves failed "
          "runs as they are") {
  auto task = sgemm_task();
  const auto* k = find_kind("gemm");
  auto honest = apply_speed_of_light(passed_run(1e9, 221184), *k,
    task.workloads, one_giga, cpu_peak_safety_factor);
  CHECK(honest.status == eval_status::passed);
  CHECK(honest.geomean_speedup == 2);
  // Exactly at the gate's T_SOL; the fraction reported is against the
  // measured peak, which the gate's peak exceeds by the safety factor.
  CHECK(honest.workloads[1].sol_fraction == Approx(cpu_peak_safety_factor));
  auto failed = passed_run(1, 1);
  failed.status = eval_status::incorrect;
  failed.detail = "input mutated";
  auto kept = apply_speed_of_light(
    failed, *k, task.workloads, one_giga, cpu_peak_safety_factor);
  CHECK(kept.status == eval_status::incorrect);
  CHECK(kept.detail == "input mutated");
}

TEST_CASE("with no slack, as on a GPU whose gate is the datasheet's, the "
          "fraction reported is T_SOL over the median") {
  auto task = sgemm_task();
  const auto* k = find_kind("gemm");
  // Workload 2 (48^3): T_SOL = 221184 ns; a median 4 times that is 25 %.
  auto run = apply_speed_of_light(
    passed_run(1e9, 4 * 221184), *k, task.workloads, one_giga, 1.0);
  REQUIRE(run.status == eval_status::passed);
  CHECK(run.workloads[1].sol_fraction == Approx(0.25));
}

TEST_CASE("a CPU device names the gate's peaks in its description and the "
          "core's in its capabilities") {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.peak_flops_override = 3e9;
  opts.peak_bw_override = 5e9;
  auto dev = make_device(opts);
  CHECK(contains(
    dev->description(), "speed-of-light gate: peak ~3 GFLOP/s, ~5 GB/s"));
  // Its capabilities are the core's peaks, which the gate multiplies.
  CHECK(dev->caps().peak_flops == Approx(3e9 / cpu_peak_safety_factor));
  CHECK(dev->caps().peak_bytes_per_s == Approx(5e9 / cpu_peak_safety_factor));
  opts.peak_flops_override = 0;
  opts.peak_bw_override = 0;
  auto measured = make_device(opts);
  CHECK(contains(measured->description(), " GFLOP/s, ~"));
  CHECK(!contains(measured->description(), "peak ~0 GFLOP/s"));
}
