// Specification of `eat export traces` (runtime/trace_export.hpp,
// docs/interop.md): every file it writes passes a checker of
// FlashInfer-Bench's schema (field names, types, and which status carries
// correctness and performance), on hand-made results and on a real run.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "actors/protocol/wire.hpp"
#include "persistence/run_writer.hpp"
#include "runtime/cli.hpp"
#include "runtime/run_dir.hpp"
#include "runtime/task_file.hpp"
#include "runtime/trace_export.hpp"
#include "tests/persistence/make_event.hpp"
#include "tests/runtime/cli_support.hpp"
#include "tests/runtime/flashinfer_schema.hpp"
#include "tests/runtime/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace eat;
using eat::test::check_solution;
using eat::test::check_trace;
using eat::test::problems;

namespace {

using eat::test::eat_cli;

// --- Hand-made results ----------------------------------------------------

workload make_workload(std::string name, std::map<std::string, int64_t> axes) {
  workload w;
  w.name = std::move(name);
  w.axes = std::move(axes);
  return w;
}

task_spec three_workload_task() {
  task_spec t;
  t.name = "sgemm";
  t.kind = "gemm";
  t.atol = 1e-4;
  t.rtol = 1e-4;
  t.workloads = {make_workload("w1", {{"m", 8}, {"n", 8}, {"k", 8}}),
    make_workload("w2", {{"m", 16}, {"n", 8}, {"k", 4}}),
    make_workload("w3", {{"m", 4}, {"n", 4}, {"k", 4}})};
  return t;
}

candidate sample_candidate(const std::string& id) {
  candidate c;
  c.id = id;
  c.team = "t1";
  c.agent = "t1.a1";
  c.task = "sgemm";
  c.family = "tiled";
  c.params = {{"tile_m", "8"}};
  c.source = "extern \"C\" void eat_gemm() {}\n";
  return c;
}

workload_result measured(const std::string& name, eval_status s) {
  workload_result w;
  w.workload = name;
  w.status = s;
  w.max_abs_error = 2e-6;
  w.max_rel_error = 3e-7;
  w.samples = 12;
  w.baseline_median_ns = 4e6;
  w.candidate_median_ns = 1e6;
  w.speedup = s == eval_status::passed ? 4 : 0;
  return w;
}

eval_result sample_result(const std::string& id, eval_status s) {
  eval_result r;
  r.candidate = id;
  r.status = s;
  r.device = "cpu0: Intel Xeon Platinum 8480+, core 1, g++ 12.2.0, peak ~1";
  r.compiler = "g++ (Debian 12.2.0-14) 12.2.0; -O3 -march=native -shared";
  return r;
}

std::vector<json> parse_traces(const exported_solution& x) {
  std::vector<json> out;
  for (const auto& t : x.traces) {
    out.push_back(json::parse(t));
    CHECK(check_trace(out.back()) == problems{});
  }
  CHECK(check_solution(json::parse(x.json)) == problems{});
  return out;
}

/// A run directory holding `events` in its log.
void write_run(
  const fs::path& root, const fs::path& dir, std::vector<event> events) {
  auto rd = run_dir::create(root, "x", "[run]\n", dir);
  REQUIRE(rd);
  auto s = persistence::store::open(rd->store_dir());
  REQUIRE(s);
  auto w = persistence::run_writer::open(**s);
  REQUIRE(w);
  REQUIRE((*w)->commit(std::move(events), {}));
}

} // namespace

TEST_CASE("the schema checker rejects what FlashInfer-Bench rejects") {
  auto pass = measured("w1", eval_status::passed);
  auto x = export_candidate(
    three_workload_task(), "run", sample_candidate("c1"),
    [&] {
      auto r = sample_result("c1", eval_status::passed);
      r.workloads = {pass, pass, pass};
      r.workloads[1].workload = "w2";
      r.workloads[2].workload = "w3";
      return r;
    }(),
    0);
  REQUIRE(x);
  auto good = json::parse(x->traces.at(0));
  REQUIRE(check_trace(good) == problems{});
  auto no_perf = good;
  no_perf["evaluation"].erase("performance");
  CHECK(check_trace(no_perf).size() == 1);
  auto incorrect_with_perf = good;
  incorrect_with_perf["evaluation"]["status"] = "INCORRECT_NUMERICAL";
  CHECK(check_trace(incorrect_with_perf).size() == 1);
  auto compile_with_correctness = no_perf;
  compile_with_correctness["evaluation"]["status"] = "COMPILE_ERROR";
  CHECK(check_trace(compile_with_correctness).size() == 1);
  auto misspelt = good;
  misspelt["evaluation"]["performance"]["latency"] = 1.0;
  CHECK(check_trace(misspelt).size() == 1);
  auto solution = json::parse(x->json);
  REQUIRE(check_solution(solution) == problems{});
  solution["spec"]["entry_point"] = "eat_gemm";
  CHECK(!check_solution(solution).empty());
}

TEST_CASE("every eval_status maps to a FlashInfer-Bench status, pending to "
          "none") {
  CHECK(flashinfer_status(eval_status::passed) == "PASSED");
  CHECK(flashinfer_status(eval_status::incorrect) == "INCORRECT_NUMERICAL");
  CHECK(flashinfer_status(eval_status::compile_error) == "COMPILE_ERROR");
  CHECK(flashinfer_status(eval_status::runtime_error) == "RUNTIME_ERROR");
  CHECK(flashinfer_status(eval_status::timeout) == "TIMEOUT");
  CHECK(flashinfer_status(eval_status::rejected) == "RUNTIME_ERROR");
  CHECK(!flashinfer_status(eval_status::pending));
  // Every enumerator is in the table (the enum ends with rejected).
  for (int i = 1; i <= static_cast<int>(eval_status::rejected); ++i)
    CHECK(flashinfer_status(static_cast<eval_status>(i)));
}

TEST_CASE("the hardware is the device model, the language follows the "
          "backend") {
  CHECK(device_model("cpu0: AMD EPYC 9654 96-Core Processor, core 1, g++")
        == "AMD EPYC 9654 96-Core Processor");
  CHECK(device_model("gpu0: NVIDIA H200 (sm_90, GPU-1234, GPU 0), driver 1")
        == "NVIDIA H200");
  CHECK(device_model("sim0: sim timing model (noise 0.02, seed 1)")
        == "sim timing model");
  CHECK(device_model("") == "unknown");
  CHECK(flashinfer_language("cpu") == "cpp");
  CHECK(flashinfer_language("cuda") == "cuda");
  CHECK(flashinfer_language("hip") == "cpp");
}

TEST_CASE("a GPU evaluation records driver, runtime and compiler as libs, "
          "and a HIP solution stays readable by FlashInfer-Bench") {
  auto t = three_workload_task();
  t.backend = "hip";
  auto r = sample_result("c1", eval_status::compile_error);
  r.device = "gpu0: AMD Instinct MI300X (gfx942, GPU-77, GPU 0), driver 60342,"
             " runtime 60342, hipcc 6.3, peak ~160 TFLOP/s";
  r.compiler = "hipcc 6.3; ";
  auto x = export_candidate(t, "run", sample_candidate("c1"), r, 0);
  REQUIRE(x);
  auto traces = parse_traces(*x);
  const auto& env = traces.at(0)["evaluation"]["environment"];
  CHECK(env["hardware"] == "AMD Instinct MI300X");
  CHECK(env["libs"]
        == json{{"compiler", "hipcc 6.3"}, {"driver", "60342"},
          {"runtime", "60342"}});
  auto s = json::parse(x->json);
  CHECK(s["spec"]["language"] == "cpp");
  CHECK(s["spec"]["entry_point"] == "kernel.hip::eat_gemm");
  CHECK(s["spec"]["dependencies"] == json{"hip"});
  CHECK(s["spec"]["target_hardware"] == json{"AMD Instinct MI300X"});
}

TEST_CASE("a workload's UUID is stable, distinct per workload, and an RFC "
          "9562 version 8 UUID") {
  auto t = three_workload_task();
  auto a = workload_uuid("sgemm", t.workloads[0]);
  CHECK(a == workload_uuid("sgemm", t.workloads[0]));
  CHECK(a != workload_uuid("sgemm", t.workloads[1]));
  CHECK(a != workload_uuid("other", t.workloads[0]));
  // A definition task's workload keeps the uuid of its workloads.jsonl line.
  auto w = t.workloads[0];
  w.uuid = "6c2bd5a1-1f0e-4c7a-9d2b-0a4f3c8e7b15";
  CHECK(workload_uuid("sgemm", w) == w.uuid);
  std::regex v8{"[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                "[0-9a-f]{12}"};
  CHECK(std::regex_match(a, v8));
  CHECK(iso_utc(1764500321123) == "2025-11-30T10:58:41.123Z");
}

TEST_CASE("a passed candidate gives PASSED traces with correctness and "
          "performance") {
  auto r = sample_result("c1", eval_status::passed);
  for (auto name : {"w1", "w2", "w3"})
    r.workloads.push_back(measured(name, eval_status::passed));
  auto x = export_candidate(
    three_workload_task(), "run-1", sample_candidate("c1"), r, 1764500321123);
  REQUIRE(x);
  CHECK(x->name == "run-1_c1");
  auto traces = parse_traces(*x);
  REQUIRE(traces.size() == 3);
  const auto& e = traces[0]["evaluation"];
  CHECK(e["status"] == "PASSED");
  CHECK(e["performance"]["latency_ms"] == 1.0);
  CHECK(e["performance"]["reference_latency_ms"] == 4.0);
  CHECK(e["performance"]["speedup_factor"] == 4.0);
  CHECK(e["correctness"]["max_absolute_error"] == 2e-6);
  CHECK(e["correctness"]["max_relative_error"] == 3e-7);
  CHECK(e["correctness"]["extra"] == json{{"atol", 1e-4}, {"rtol", 1e-4}});
  CHECK(e["environment"]["hardware"] == "Intel Xeon Platinum 8480+");
  CHECK(
    e["environment"]["libs"]["compiler"] == "g++ (Debian 12.2.0-14) 12.2.0");
  CHECK(e["timestamp"] == "2025-11-30T10:58:41.123Z");
  CHECK(traces[1]["workload"]["axes"] == json{{"k", 4}, {"m", 16}, {"n", 8}});
  CHECK(traces[1]["workload"]["inputs"]
        == json{{"a", {{"type", "random"}}}, {"b", {{"type", "random"}}}});
  CHECK(traces[1]["solution"] == "run-1_c1");
  auto s = json::parse(x->json);
  CHECK(s["spec"]["entry_point"] == "kernel.cpp::eat_gemm");
  CHECK(s["spec"]["language"] == "cpp");
  CHECK(s["author"] == "t1/t1.a1");
  CHECK(s["sources"][0]["content"] == sample_candidate("c1").source);
}

TEST_CASE("a task's matched ratio and maximum error go with its tolerances "
          "into the correctness's extra") {
  auto task = three_workload_task();
  task.matched_ratio = 0.99;
  task.max_error = 0.5;
  auto r = sample_result("c1", eval_status::passed);
  for (auto name : {"w1", "w2", "w3"})
    r.workloads.push_back(measured(name, eval_status::passed));
  auto x = export_candidate(task, "run-1", sample_candidate("c1"), r, 0);
  REQUIRE(x);
  auto traces = parse_traces(*x);
  REQUIRE(traces.size() == 3);
  CHECK(traces[0]["evaluation"]["correctness"]["extra"]
        == json{{"atol", 1e-4}, {"rtol", 1e-4}, {"matched_ratio", 0.99},
          {"max_error", 0.5}});
}

TEST_CASE("a definition task's traces name its FlashInfer-Bench definition "
          "and describe scalar and generated inputs") {
  task_spec t;
  t.name = "gqa_local";
  t.kind = "definition";
  t.definition = R"({"name": "gqa_paged_decode_h32_kv4_d128_ps1"})";
  auto w = make_workload("a1b2c3d4", {{"batch_size", 16}});
  tensor_arg q;
  q.name = "q";
  q.dtype = "bfloat16";
  tensor_arg scale;
  scale.name = "sm_scale";
  scale.dtype = "float32";
  scale.scalar = true;
  scale.value = 0.125;
  w.inputs = {q, scale};
  t.workloads = {w};
  auto r = sample_result("c1", eval_status::passed);
  r.workloads = {measured("a1b2c3d4", eval_status::passed)};
  auto x = export_candidate(t, "run", sample_candidate("c1"), r, 0);
  REQUIRE(x);
  auto traces = parse_traces(*x);
  REQUIRE(traces.size() == 1);
  CHECK(traces[0]["definition"] == "gqa_paged_decode_h32_kv4_d128_ps1");
  CHECK(
    json::parse(x->json)["definition"] == "gqa_paged_decode_h32_kv4_d128_ps1");
  CHECK(
    json::parse(x->json)["spec"]["entry_point"] == "kernel.cpp::eat_kernel");
  CHECK(traces[0]["workload"]["inputs"]
        == json{{"q", {{"type", "random"}}},
          {"sm_scale", {{"type", "scalar"}, {"value", 0.125}}}});
  t.definition = "not json";
  CHECK(definition_name(t) == "gqa_local");
}

TEST_CASE("a builtin kind's traces carry its trace_definition, else the "
          "task's name") {
  task_spec t;
  t.name = "rmsnorm_h4096";
  t.kind = "rmsnorm";
  CHECK(definition_name(t) == "rmsnorm_h4096");
  t.trace_definition = "rmsnorm_h4096_fp32";
  CHECK(definition_name(t) == "rmsnorm_h4096_fp32");
  t.workloads = {make_workload("b1", {{"batch", 1}, {"hidden", 4096}})};
  auto r = sample_result("c1", eval_status::passed);
  r.workloads = {measured("b1", eval_status::passed)};
  auto x = export_candidate(t, "run", sample_candidate("c1"), r, 0);
  REQUIRE(x);
  auto traces = parse_traces(*x);
  REQUIRE(traces.size() == 1);
  CHECK(traces[0]["definition"] == "rmsnorm_h4096_fp32");
  CHECK(json::parse(x->json)["definition"] == "rmsnorm_h4096_fp32");
}

TEST_CASE("the shipped fp32 rmsnorm_h4096 does not claim FlashInfer-Bench's "
          "bf16 definition of that name, and the bf16 CPU task joins it") {
  auto cpu = load_task(fs::path{EAT_SOURCE_DIR} / "kernels", "rmsnorm_h4096");
  auto bf16
    = load_task(fs::path{EAT_SOURCE_DIR} / "kernels", "rmsnorm_h4096_bf16");
  auto cuda
    = load_task(fs::path{EAT_SOURCE_DIR} / "kernels", "rmsnorm_h4096_cuda");
  REQUIRE(cpu);
  REQUIRE(bf16);
  REQUIRE(cuda);
  CHECK(definition_name(*cuda) == "rmsnorm_h4096");
  CHECK(definition_name(*bf16) == "rmsnorm_h4096");
  CHECK(definition_name(*cpu) != definition_name(*cuda));
}

TEST_CASE("an incorrect workload carries correctness only, and workloads "
          "after it are not reached") {
  auto r = sample_result("c2", eval_status::incorrect);
  r.workloads = {measured("w1", eval_status::passed),
    measured("w2", eval_status::incorrect),
    measured("w3", eval_status::pending)};
  r.workloads[1].detail = "w2: C[3][1] got 5, expected 4";
  auto x = export_candidate(
    three_workload_task(), "run", sample_candidate("c2"), r, 0);
  REQUIRE(x);
  auto traces = parse_traces(*x);
  REQUIRE(traces.size() == 2);
  CHECK(x->not_reached == 1);
  CHECK(
    x->statuses == std::vector<std::string>{"PASSED", "INCORRECT_NUMERICAL"});
  CHECK(traces[1]["evaluation"]["log"] == "w2: C[3][1] got 5, expected 4");
  CHECK(traces[1]["evaluation"].contains("correctness"));
  CHECK(!traces[1]["evaluation"].contains("performance"));
}

TEST_CASE("a failure before any workload gives that status on every "
          "workload, with neither correctness nor performance") {
  auto r = sample_result("c3", eval_status::compile_error);
  r.detail = "candidate does not compile: exit 1";
  // A log cut inside a UTF-8 sequence must not break the export.
  r.build_log = "kernel.cpp:1: error: expected ';' \xe2\x80";
  auto x = export_candidate(
    three_workload_task(), "run", sample_candidate("c3"), r, 0);
  REQUIRE(x);
  auto traces = parse_traces(*x);
  REQUIRE(traces.size() == 3);
  for (const auto& t : traces) {
    CHECK(t["evaluation"]["status"] == "COMPILE_ERROR");
    CHECK_THAT(t["evaluation"]["log"].get<std::string>(),
      Catch::Contains("expected ';'"));
  }
  r.status = eval_status::timeout;
  x = export_candidate(
    three_workload_task(), "run", sample_candidate("c3"), r, 0);
  REQUIRE(x);
  CHECK(x->statuses == std::vector<std::string>(3, "TIMEOUT"));
}

TEST_CASE("a rejected evaluation discredits every workload it measured") {
  auto r = sample_result("c4", eval_status::rejected);
  r.detail = "faster than the speed of light on w2";
  r.workloads = {measured("w1", eval_status::passed),
    measured("w2", eval_status::rejected), measured("w3", eval_status::passed)};
  auto x = export_candidate(
    three_workload_task(), "run", sample_candidate("c4"), r, 0);
  REQUIRE(x);
  auto traces = parse_traces(*x);
  CHECK(x->statuses == std::vector<std::string>(3, "RUNTIME_ERROR"));
  CHECK(traces[0]["evaluation"]["log"]
        == "rejected: faster than the speed of light on w2");
}

TEST_CASE("a candidate that cannot be a Solution is refused") {
  auto c = sample_candidate("c5");
  c.source.clear();
  auto empty = export_candidate(three_workload_task(), "run", c,
    sample_result("c5", eval_status::passed), 0);
  REQUIRE(!empty);
  CHECK_THAT(render(empty.error()), Catch::Contains("source is empty"));
  auto pending = export_candidate(three_workload_task(), "run",
    sample_candidate("c5"), sample_result("c5", eval_status::pending), 0);
  CHECK(!pending);
}

TEST_CASE("eat export traces refuses what is not a run, an empty run, and an "
          "unwritable output") {
  test::temp_dir tmp;
  auto not_run = eat_cli({"export", "traces", tmp.path().string()});
  CHECK(not_run.code == exit_code::bad_run_dir);
  CHECK_THAT(not_run.out, Catch::Contains("is not a run directory"));
  run_started start;
  start.run_id = "x";
  start.spec = three_workload_task();
  auto dir = tmp.path() / "run";
  write_run(tmp.path(), dir, {make_event(event_kind::run_started, start)});
  auto empty = eat_cli({"export", "traces", dir.string()});
  CHECK(empty.code == exit_code::bad_run_dir);
  CHECK_THAT(empty.out, Catch::Contains("no evaluated candidate"));
  CHECK(eat_cli({"export", "traces"}).code == exit_code::usage);
  CHECK(
    eat_cli({"export", "solutions", dir.string()}).code == exit_code::usage);
  CHECK(eat_cli({"export", "--help"}).code == exit_code::ok);
}

TEST_CASE("eat export traces writes a stopped run's evaluated candidates and "
          "leaves out those never evaluated") {
  test::temp_dir tmp;
  run_started start;
  start.run_id = "x";
  start.spec = three_workload_task();
  team_spawned team;
  team.team = "t1";
  auto r = sample_result("t1-c1", eval_status::passed);
  for (auto name : {"w1", "w2", "w3"})
    r.workloads.push_back(measured(name, eval_status::passed));
  auto dir = tmp.path() / "run";
  write_run(tmp.path(), dir,
    {make_event(event_kind::run_started, start),
      make_event(event_kind::team_spawned, team),
      make_event(event_kind::candidate_submitted, sample_candidate("t1-c1")),
      make_event(event_kind::evaluation_finished, r),
      make_event(event_kind::candidate_submitted, sample_candidate("t1-c2"))});
  auto out = tmp.path() / "out";
  auto ok = eat_cli({"export", "traces", dir.string(), "--out", out.string()});
  CHECK(ok.code == exit_code::ok);
  CHECK_THAT(ok.out, Catch::Contains("wrote 1 solutions"));
  CHECK_THAT(ok.out, Catch::Contains("3 PASSED"));
  CHECK_THAT(ok.out, Catch::Contains("1 candidates not evaluated yet"));
  CHECK(fs::exists(out / "solutions" / "x_t1-c1.json"));
  std::ifstream lines{out / "traces" / "sgemm.jsonl"};
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    CHECK(check_trace(json::parse(line)) == problems{});
    ++n;
  }
  CHECK(n == 3);
  // An output path under a regular file cannot be created.
  std::ofstream{tmp.path() / "file"} << "x";
  auto bad = eat_cli({"export", "traces", dir.string(), "--out",
    (tmp.path() / "file" / "out").string()});
  CHECK(bad.code == exit_code::failed);
  CHECK_THAT(bad.out, Catch::Contains("cannot write"));
}

namespace {

/// A task whose one template family gives a correct, a wrong and a
/// non-compiling kernel, and a configuration trying each once.
fs::path write_variants_run_config(const fs::path& dir) {
  auto task = dir / "tasks" / "variants";
  fs::create_directories(task);
  for (auto f : {"reference.cpp", "baseline.cpp"})
    fs::copy_file(fs::path{EAT_SOURCE_DIR} / "kernels" / "sgemm" / f, task / f);
  std::ofstream{task / "task.toml"}
    << "name = \"variants\"\nkind = \"gemm\"\ndtype = \"float32\"\n"
    << "atol = 1e-4\nrtol = 1e-4\nreference = \"reference.cpp\"\n"
    << "baseline = \"baseline.cpp\"\n"
    << "[[workloads]]\nname = \"m16_n16_k16\"\n"
    << "axes = { m = 16, n = 16, k = 16 }\n"
    << "[[workloads]]\nname = \"m8_n24_k4\"\naxes = { m = 8, n = 24, k = 4 }\n"
    << "[[templates]]\nname = \"variant\"\nsource = \"variant.cpp.in\"\n"
    << "[[templates.params]]\nname = \"variant\"\n"
    << "values = [\"good\", \"wrong\", \"broken\"]\n";
  std::ofstream{task / "variant.cpp.in"}
    << "#include <cstdint>\n#define VARIANT_{{variant}} 1\n"
    << "#ifdef VARIANT_broken\nthis line does not compile\n#endif\n"
    << "extern \"C\" void eat_gemm(const float* a, const float* b, float* c,\n"
    << "                         int64_t m, int64_t n, int64_t k) {\n"
    << "  for (int64_t i = 0; i < m; ++i)\n"
    << "    for (int64_t j = 0; j < n; ++j) {\n"
    << "      float sum = 0.0f;\n"
    << "      for (int64_t p = 0; p < k; ++p)\n"
    << "        sum += a[i * k + p] * b[p * n + j];\n"
    << "#ifdef VARIANT_wrong\n      sum += 1.0f;\n#endif\n"
    << "      c[i * n + j] = sum;\n    }\n}\n";
  auto config = dir / "config.toml";
  std::ofstream{config}
    << "[run]\nname = \"export-test\"\ntask = \"variants\"\n"
    << "tasks_dir = \"" << (dir / "tasks").string() << "\"\n"
    << "root = \"" << dir.string() << "\"\nseed = 3\nmax_evaluations = 3\n"
    << "mode = \"single\"\n[supervisor]\nplateau_window = 0\n"
    << "[timing]\nwarmup = 1\nmin_samples = 3\nmin_time_s = 0.01\n"
    << "max_time_s = 0.1\ncheck_seeds = 2\n";
  return config;
}

} // namespace

TEST_CASE("the export of a real run with passed, incorrect and non-compiling "
          "candidates passes the schema checker") {
  test::temp_dir tmp;
  auto config = write_variants_run_config(tmp.path());
  auto dir = tmp.path() / "run";
  test::child_process run{
    EAT_BINARY, {"run", config.string(), "--run-dir", dir.string()}};
  std::string output;
  auto status = run.finish(output);
  INFO(output);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  auto x = eat_cli({"export", "traces", dir.string()});
  INFO(x.out);
  REQUIRE(x.code == exit_code::ok);
  CHECK_THAT(x.out, Catch::Contains("wrote 3 solutions"));
  std::set<std::string> solutions;
  for (const auto& f : fs::directory_iterator{dir / "export" / "solutions"}) {
    std::ifstream in{f.path()};
    auto s = json::parse(in);
    CHECK(check_solution(s) == problems{});
    CHECK(f.path().stem().string() == s["name"]);
    solutions.insert(s["name"].get<std::string>());
  }
  CHECK(solutions.size() == 3);
  std::ifstream lines{dir / "export" / "traces" / "variants.jsonl"};
  std::map<std::string, int> statuses;
  std::string line;
  while (std::getline(lines, line)) {
    auto t = json::parse(line);
    CHECK(check_trace(t) == problems{});
    CHECK(solutions.count(t["solution"].get<std::string>()) == 1);
    ++statuses[t["evaluation"]["status"].get<std::string>()];
  }
  // good: 2 workloads passed; wrong: the first workload incorrect, the
  // second not reached; broken: both workloads COMPILE_ERROR.
  CHECK(statuses
        == std::map<std::string, int>{
          {"COMPILE_ERROR", 2}, {"INCORRECT_NUMERICAL", 1}, {"PASSED", 2}});
  CHECK_THAT(x.out, Catch::Contains("1 workloads not reached"));
}
