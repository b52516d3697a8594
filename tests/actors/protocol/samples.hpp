// Sample values of the protocol structs, with every field set, for tests.

#pragma once

#include "actors/protocol/assignment.hpp"
#include "actors/protocol/event.hpp"
#include "actors/protocol/progress.hpp"
#include "actors/protocol/wire.hpp"

namespace eat {

inline task_spec sample_task() {
  task_spec t;
  t.name = "sgemm";
  t.kind = "gemm";
  t.dtype = "float32";
  t.atol = 1e-4;
  t.rtol = 2e-4;
  t.workloads.emplace_back();
  t.workloads[0].name = "m8_n8_k8";
  t.workloads[0].axes = {{"m", 8}, {"n", 8}, {"k", 8}};
  t.reference_source = "// reference";
  t.baseline_source = "// baseline";
  t.families = {{"tiled", "{{a}} {{b}}",
    {{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}}, {"a == 1 || b != \"z\""}}};
  return t;
}

inline candidate sample_candidate() {
  candidate c;
  c.id = "t1-c0003";
  c.team = "t1";
  c.agent = "t1.a1";
  c.task = "sgemm";
  c.family = "tiled";
  c.params = {{"a", "2"}, {"b", "y"}};
  c.parent = "t1-c0001";
  c.source = "extern \"C\" void f() {}\n";
  c.tokens = 1000;
  return c;
}

inline eval_result sample_result() {
  eval_result r;
  r.candidate = "t1-c0003";
  r.status = eval_status::incorrect;
  r.detail = "element 3: got 1, expected 2";
  workload_result w;
  w.workload = "m8_n8_k8";
  w.status = eval_status::passed;
  w.samples = 12;
  w.speedup = 2.5;
  w.speedup_low = 2.25;
  w.speedup_high = 2.75;
  r.workloads = {w, w};
  r.geomean_speedup = 2.5;
  r.source_hash = "ab12";
  r.device = "cpu0";
  r.compiler = "g++ -O3";
  r.build_log = "warning: x";
  r.method = "steady_clock, interleaved";
  r.seed = 99;
  r.compile_s = 0.5;
  r.run_s = 1.5;
  return r;
}

inline assignment sample_assignment() {
  assignment a;
  a.team = "t1";
  a.agent = "t1.a1";
  a.role = "tuner";
  a.strategy = "local";
  a.task = sample_task();
  a.parent = {"t1-c0001", "tiled", {{"a", "1"}, {"b", "x"}},
              eval_status::passed, 1.5};
  a.learning = "# lessons";
  a.history = {a.parent};
  a.token_budget = 5000;
  a.seed = 7;
  return a;
}

inline run_summary sample_summary() {
  run_summary s;
  s.run_id = "quickstart-1";
  s.reason = "max_evaluations reached (3)";
  s.evaluations = 3;
  s.passed = 2;
  s.tokens = 3000;
  s.best_candidate = "t1-c0003";
  s.best_team = "t1";
  s.best_speedup = 2.5;
  s.best_workloads = sample_result().workloads;
  s.best_family = "tiled";
  s.best_params = sample_candidate().params;
  s.best_source = sample_candidate().source;
  return s;
}

inline event sample_event() {
  event e;
  e.seq = 4;
  e.unix_ms = 1764500000000;
  e.kind = event_kind::candidate_submitted;
  e.body = wire::encode(sample_candidate());
  return e;
}

} // namespace eat
