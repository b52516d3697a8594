#include "bench/synthetic_run.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/result.hpp"
#include "actors/protocol/wire.hpp"

namespace eat::bench {

namespace {

constexpr int64_t start_ms = 1'700'000'000'000;

std::string candidate_id(uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "c%07llu", static_cast<unsigned long long>(n));
  return buf;
}

std::string team_id(uint64_t n) {
  return "t" + std::to_string(n + 1);
}

/// A tiled GEMM kernel of about 800 bytes, varied by `n`.
std::string kernel_source(uint64_t n) {
  auto tile = std::to_string(16 << (n % 4));
  std::string src = "// candidate " + candidate_id(n) + "\n"
                    + "#include <cstddef>\nconstexpr int tile_m = " + tile
                    + ";\nconstexpr int tile_n = " + tile + ";\n";
  src += "extern \"C\" void kernel(const float* a, const float* b, float* c,\n"
         "                       int m, int n, int k) {\n"
         "  for (int i0 = 0; i0 < m; i0 += tile_m)\n"
         "    for (int j0 = 0; j0 < n; j0 += tile_n)\n"
         "      for (int i = i0; i < i0 + tile_m && i < m; ++i)\n"
         "        for (int j = j0; j < j0 + tile_n && j < n; ++j) {\n"
         "          float acc = 0.0f;\n"
         "          for (int p = 0; p < k; ++p)\n"
         "            acc += a[static_cast<size_t>(i) * k + p]\n"
         "                   * b[static_cast<size_t>(p) * n + j];\n"
         "          c[static_cast<size_t>(i) * n + j] = acc;\n"
         "        }\n"
         "}\n";
  src.resize(std::max<size_t>(src.size(), 800), ' ');
  return src;
}

workload_result workload_of(const char* name, uint64_t n) {
  workload_result w;
  w.workload = name;
  w.status = eval_status::passed;
  w.samples = 30;
  w.baseline_median_ns = 1.0e6;
  w.candidate_median_ns = 1.0e6 / (1.0 + static_cast<double>(n % 50) / 10);
  w.candidate_mean_ns = w.candidate_median_ns * 1.01;
  w.candidate_min_ns = w.candidate_median_ns * 0.97;
  w.candidate_p20_ns = w.candidate_median_ns * 0.99;
  w.candidate_p80_ns = w.candidate_median_ns * 1.02;
  w.candidate_cv = 0.01;
  w.speedup = w.baseline_median_ns / w.candidate_median_ns;
  w.speedup_low = w.speedup * 0.98;
  w.speedup_high = w.speedup * 1.02;
  return w;
}

candidate candidate_of(uint64_t n, uint64_t teams) {
  candidate c;
  c.id = candidate_id(n);
  c.team = team_id(n % teams);
  c.agent = "a" + std::to_string(n % 3 + 1);
  c.task = "gemm_f32";
  c.family = "tiled";
  c.params = {{"tile_m", std::to_string(16 << (n % 4))},
    {"tile_n", std::to_string(16 << (n % 4))}};
  c.parent = n >= teams ? candidate_id(n - teams) : "";
  c.source = kernel_source(n);
  c.tokens = 1200;
  return c;
}

eval_result result_of(uint64_t n) {
  eval_result r;
  r.candidate = candidate_id(n);
  r.status = n % 10 == 9 ? eval_status::incorrect : eval_status::passed;
  if (r.status == eval_status::passed) {
    r.workloads = {
      workload_of("m256_n256_k256", n), workload_of("m512_n512_k512", n + 7)};
    r.geomean_speedup = r.workloads[0].speedup;
  } else {
    r.detail = "max |error| 0.5 above tolerance on m256_n256_k256";
  }
  r.source_hash = std::string(64, 'a' + static_cast<char>(n % 6));
  r.device = "cpu0: bench core 1";
  r.compiler = "g++ 12 -O3 -march=native";
  r.method = "paired, 30 samples, steady_clock";
  r.seed = n;
  r.compile_s = 1.7;
  r.run_s = 0.4;
  return r;
}

} // namespace

synthetic_run::synthetic_run(uint64_t total, uint64_t teams)
  : total_(total), teams_(teams) {
  // nop
}

std::vector<event> synthetic_run::next(size_t max) {
  std::vector<event> out;
  while (out.size() < max && made_ < total_)
    out.push_back(make(made_++));
  return out;
}

event synthetic_run::make(uint64_t index) const {
  event e;
  e.unix_ms = start_ms + static_cast<int64_t>(index);
  if (index == 0) {
    run_started s;
    s.run_id = "bench";
    s.task = "gemm_f32";
    s.seed = 1;
    s.max_evaluations = total_;
    s.config_toml = "[run]\nmax_evaluations = " + std::to_string(total_) + "\n";
    s.config_path = "configs/bench.toml";
    s.spec.name = "gemm_f32";
    s.spec.kind = "gemm";
    s.spec.dtype = "float32";
    e.kind = event_kind::run_started;
    e.body = wire::encode(s);
  } else if (index <= teams_) {
    team_spawned t{
      team_id(index - 1), "explore", {"a1", "a2", "a3"}, "", "initial team"};
    e.kind = event_kind::team_spawned;
    e.body = wire::encode(t);
  } else {
    auto k = index - 1 - teams_;
    e.kind = k % 2 == 0 ? event_kind::candidate_submitted
                        : event_kind::evaluation_finished;
    e.body = k % 2 == 0 ? wire::encode(candidate_of(k / 2, teams_))
                        : wire::encode(result_of(k / 2));
  }
  return e;
}

} // namespace eat::bench
