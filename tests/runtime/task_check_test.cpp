// `eat tasks check` (runtime/task_check.hpp): every shipped task passes (a
// test case each); a broken template instance is reported by name, an
// instance the template rejects is not a failure; the loader explains a bad
// expert_libs value; a GPU task runs on a device of its backend, and its
// sources are compiled, not run, where there is none but its compiler.

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include "actors/protocol/error.hpp"
#include "devices/cpu_device.hpp"
#include "devices/sim_device.hpp"
#include "runtime/flashinfer_import.hpp"
#include "runtime/task_check.hpp"
#include "runtime/task_file.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_files.hpp"

using namespace eat;
namespace fs = std::filesystem;

namespace {

using eat::test::write_text;

const fs::path source_dir{EAT_SOURCE_DIR};

std::unique_ptr<devices::device> make_device(const fs::path& work_dir) {
  auto opts = task_check_cpu_options(EAT_RUNNER_PATH, work_dir.string());
  // These tests check tasks, not the speed-of-light gate, whose probe runs
  // on a core that parallel tests share: measured there, the peak can fall
  // below what OpenBLAS reaches, and the gate would reject the expert.
  opts.peak_flops_override = 1e15;
  opts.peak_bw_override = 1e15;
  auto dev = devices::make_cpu_device("check", opts);
  if (!dev)
    FAIL("cannot make the CPU device: " << render(dev.error()));
  return std::move(*dev);
}

/// The declared constraint of write_softmax_task's template by default.
const std::string rejected_declared
  = R"(constraints = ["variant != \"rejected\""])";

/// A softmax task in `dir`/t whose template has a broken variant, a
/// variant the template rejects, and two good ones; `constraints` is the
/// template's constraints key.
void write_softmax_task(const fs::path& dir, const std::string& extra = "",
  const std::string& constraints = rejected_declared) {
  auto folder = dir / "t";
  std::string baseline;
  for (const char* f : {"reference.cpp", "baseline.cpp"}) {
    std::ifstream in{source_dir / "kernels/softmax" / f};
    std::string text{std::istreambuf_iterator<char>{in}, {}};
    write_text(folder / f, text);
    baseline = text;
  }
  write_text(folder / "variant.cpp.in", R"(#include <cstdint>
#define EAT_{{variant}} 1
#if defined(EAT_broken)
this is not C++;
#elif defined(EAT_rejected)
#  error "invalid combination: variant 'rejected' is never valid"
#endif
extern "C" void eat_softmax(const float* x, float* out, int64_t rows,
                            int64_t cols);
)" + baseline);
  write_text(folder / "task.toml", R"(name = "t"
kind = "softmax"
dtype = "float32"
reference = "reference.cpp"
baseline = "baseline.cpp"
)" + extra + R"(
[[workloads]]
name = "small"
axes = { rows = 3, cols = 33 }

[[templates]]
name = "fam"
source = "variant.cpp.in"
)" + constraints + R"(

[[templates.params]]
name = "variant"
values = ["good", "broken", "rejected", "also_good"]
)");
}

/// The shipped tasks, one test case each below, so that CTest runs them in
/// parallel (together they take minutes on two cores).
const std::vector<std::string> shipped = {"gemm_n4096_k4096",
  "gemm_n4096_k4096_hip", "gqa_paged_decode_h32_kv4_d128_ps1",
  "gqa_paged_decode_h32_kv4_d128_ps1_cuda",
  "gqa_paged_decode_h32_kv4_d128_ps1_hip",
  "mla_paged_decode_h16_ckv512_kpe64_ps1",
  "mla_paged_decode_h16_ckv512_kpe64_ps1_cuda",
  "mla_paged_decode_h16_ckv512_kpe64_ps1_hip", "rmsnorm_h4096",
  "rmsnorm_h4096_bf16", "rmsnorm_h4096_cuda", "rmsnorm_h4096_hip", "sgemm", "sgemm_cuda",
  "sgemm_hip", "softmax", "softmax_cuda", "softmax_hip"};

void check_shipped(const std::string& name) {
  eat::test::temp_dir work;
  auto dev = make_device(work.path());
  task_check_options opts;
  opts.sample = 1;
  auto lines = check_task_file(source_dir / "kernels", name, *dev, opts, {});
  CHECK(lines.size() >= 2);
  for (const auto& l : lines) {
    INFO(l.task << ": " << l.what << " (" << l.detail << ")");
    CHECK(l.ok);
  }
}

} // namespace

TEST_CASE("every shipped task has a test case that runs eat tasks check") {
  auto names = list_tasks(source_dir / "kernels");
  REQUIRE(names);
  CHECK(*names == shipped);
}

#define EAT_SHIPPED_TASK_PASSES(name)                                          \
  TEST_CASE("shipped task " name " passes eat tasks check") {                  \
    REQUIRE(std::count(shipped.begin(), shipped.end(), name) == 1);            \
    check_shipped(name);                                                       \
  }

EAT_SHIPPED_TASK_PASSES("gemm_n4096_k4096")
EAT_SHIPPED_TASK_PASSES("gemm_n4096_k4096_hip")
EAT_SHIPPED_TASK_PASSES("gqa_paged_decode_h32_kv4_d128_ps1")
EAT_SHIPPED_TASK_PASSES("gqa_paged_decode_h32_kv4_d128_ps1_cuda")
EAT_SHIPPED_TASK_PASSES("gqa_paged_decode_h32_kv4_d128_ps1_hip")
EAT_SHIPPED_TASK_PASSES("mla_paged_decode_h16_ckv512_kpe64_ps1")
EAT_SHIPPED_TASK_PASSES("mla_paged_decode_h16_ckv512_kpe64_ps1_cuda")
EAT_SHIPPED_TASK_PASSES("mla_paged_decode_h16_ckv512_kpe64_ps1_hip")
EAT_SHIPPED_TASK_PASSES("rmsnorm_h4096")
EAT_SHIPPED_TASK_PASSES("rmsnorm_h4096_bf16")
EAT_SHIPPED_TASK_PASSES("rmsnorm_h4096_cuda")
EAT_SHIPPED_TASK_PASSES("rmsnorm_h4096_hip")
EAT_SHIPPED_TASK_PASSES("sgemm")
EAT_SHIPPED_TASK_PASSES("sgemm_cuda")
EAT_SHIPPED_TASK_PASSES("sgemm_hip")
EAT_SHIPPED_TASK_PASSES("softmax")
EAT_SHIPPED_TASK_PASSES("softmax_cuda")
EAT_SHIPPED_TASK_PASSES("softmax_hip")

TEST_CASE("the shipped sgemm and softmax experts pass in kernel processes, "
          "whose filter lets them read what they load") {
  // OpenBLAS and oneDNN read their libraries and the CPU's description;
  // the filter refuses writing files, memory files and System V IPC.
  for (const char* name : {"sgemm", "softmax"}) {
    INFO(name);
    auto task = load_task(source_dir / "kernels", name);
    REQUIRE(task);
    REQUIRE_FALSE(task->expert_source.empty());
    task->workloads.resize(1);
    eat::test::temp_dir dir;
    auto opts = task_check_cpu_options(EAT_RUNNER_PATH, dir.path().string());
    opts.peak_flops_override = 1e15;
    opts.peak_bw_override = 1e15;
    opts.kernel_processes = true;
    auto dev = devices::make_cpu_device("expert", opts);
    REQUIRE(dev);
    candidate expert;
    expert.id = "expert";
    expert.family = "custom";
    expert.source = task->expert_source;
    auto result = (*dev)->evaluate(*task, expert, 7);
    INFO(result.detail);
    CHECK(result.status == eval_status::passed);
    CHECK_THAT(result.method, Catch::Contains("each in a process of its own"));
  }
}

TEST_CASE("tasks check names a broken template instance and accepts a "
          "rejected combination") {
  eat::test::temp_dir dir;
  write_softmax_task(dir.path() / "tasks");
  auto dev = make_device(dir.path() / "work");
  task_check_options opts;
  opts.sample = 3;
  auto lines = check_task_file(dir.path() / "tasks", "t", *dev, opts, {});
  std::map<std::string, task_check_line> by_what;
  for (const auto& l : lines)
    by_what[l.what] = l;
  REQUIRE(by_what.count("loads") == 1);
  CHECK(by_what["loads"].ok);
  CHECK(by_what["baseline"].ok);
  REQUIRE(by_what.count("template fam{variant=good}") == 1);
  CHECK(by_what["template fam{variant=good}"].ok);
  REQUIRE(by_what.count("template fam{variant=broken}") == 1);
  auto broken = by_what["template fam{variant=broken}"];
  CHECK_FALSE(broken.ok);
  CHECK(broken.detail.find("compile_error") != std::string::npos);
  REQUIRE(by_what.count("template fam{variant=rejected}") == 1);
  auto rejected = by_what["template fam{variant=rejected}"];
  CHECK(rejected.ok);
  CHECK(rejected.detail
        == "rejected as declared: candidate.cpp:6:4: error: #error "
           "\"invalid combination: variant 'rejected' is never valid\"");
}

TEST_CASE("tasks check fails where a template and its declared constraints "
          "disagree") {
  eat::test::temp_dir dir;
  auto dev = make_device(dir.path() / "work");
  task_check_options opts;
  opts.sample = 3;
  auto line = [&](const std::string& constraints, const std::string& what) {
    write_softmax_task(dir.path() / "tasks", "", constraints);
    for (const auto& l :
      check_task_file(dir.path() / "tasks", "t", *dev, opts, {}))
      if (l.what == what)
        return l;
    FAIL("no line for " << what);
    return task_check_line{};
  };
  SECTION("a rejection that no constraint declares") {
    auto l = line("", "template fam{variant=rejected}");
    CHECK_FALSE(l.ok);
    CHECK_THAT(
      l.detail, Catch::StartsWith("no declared constraint excludes it, but the "
                                  "template rejects it: "));
  }
  SECTION("a constraint that excludes an instance that compiles") {
    auto l = line(R"(constraints = ["variant != \"rejected\"", )"
                  R"("variant != \"also_good\""])",
      "template fam{variant=also_good}");
    CHECK_FALSE(l.ok);
    CHECK(l.detail
          == "compiles, but the declared constraint 'variant != "
             "\"also_good\"' excludes it");
  }
}

TEST_CASE("tasks check fails a task whose baseline disagrees with its "
          "reference") {
  eat::test::temp_dir dir;
  write_softmax_task(dir.path() / "tasks");
  write_text(dir.path() / "tasks/t/baseline.cpp", R"(#include <cstdint>
extern "C" void eat_softmax(const float* x, float* out, int64_t rows,
                            int64_t cols) {
  for (int64_t i = 0; i < rows * cols; ++i)
    out[i] = 1.0f / static_cast<float>(cols);
})");
  auto dev = make_device(dir.path() / "work");
  auto lines = check_task_file(dir.path() / "tasks", "t", *dev, {}, {});
  REQUIRE(lines.size() >= 2);
  CHECK(lines[1].what == "baseline");
  CHECK_FALSE(lines[1].ok);
  CHECK(lines[1].detail.find("baseline disagrees") != std::string::npos);
}

TEST_CASE("tasks check reports a task that does not load") {
  eat::test::temp_dir dir;
  write_softmax_task(dir.path() / "tasks", "expert_libs = [\"-Wl,-rpath=/x\"]\n");
  auto dev = make_device(dir.path() / "work");
  auto lines = check_task_file(dir.path() / "tasks", "t", *dev, {}, {});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].what == "loads");
  CHECK_FALSE(lines[0].ok);
  CHECK(lines[0].detail.find("expert_libs[0]: expected a library name")
        != std::string::npos);
}

TEST_CASE("the task loader explains bad expert keys") {
  eat::test::temp_dir dir;
  auto tasks = dir.path() / "tasks";
  SECTION("a library that is a flag") {
    write_softmax_task(tasks, "expert = \"baseline.cpp\"\n"
                              "expert_libs = [\"-Wl,-rpath=/x\"]\n");
    auto task = load_task(tasks, "t");
    REQUIRE_FALSE(task);
    auto text = render(task.error());
    CHECK(text.find("task.toml:7:16: expert_libs[0]: expected a library name")
          != std::string::npos);
  }
  SECTION("libraries without an expert") {
    write_softmax_task(tasks, "expert_libs = [\"openblas\"]\n");
    auto task = load_task(tasks, "t");
    REQUIRE_FALSE(task);
    CHECK(render(task.error()).find("expert_libs: given without an expert")
          != std::string::npos);
  }
  SECTION("an expert file that does not exist") {
    write_softmax_task(tasks, "expert = \"nope.cpp\"\n");
    auto task = load_task(tasks, "t");
    REQUIRE_FALSE(task);
    CHECK(render(task.error()).find("expert: cannot read") != std::string::npos);
  }
  SECTION("a good expert and its libraries") {
    write_softmax_task(tasks, "expert = \"baseline.cpp\"\n"
                              "expert_libs = [\"m\", \"openblas\"]\n");
    auto task = load_task(tasks, "t");
    REQUIRE(task);
    CHECK(task->expert_libs == std::vector<std::string>{"m", "openblas"});
    CHECK(task->expert_source == task->baseline_source);
  }
}

TEST_CASE("the sample of instances is deterministic and starts with the "
          "default") {
  template_family f{"f", "", {{"a", {"1", "2", "3"}}, {"b", {"x", "y"}}}};
  auto one = sample_instances(f, 3, 7);
  auto two = sample_instances(f, 3, 7);
  REQUIRE(one.size() == 4);
  CHECK(one == two);
  CHECK(one[0] == param_map{{"a", "1"}, {"b", "x"}});
  CHECK(instance_name(f, one[0]) == "f{a=1,b=x}");
  CHECK(sample_instances(f, 100, 7).size() == 6);
}

TEST_CASE("tasks check of a freshly imported definition names the missing "
          "reference, then passes once it is written") {
  eat::test::temp_dir dir;
  auto fixture = source_dir / "tests/devices/fixtures/mini_decode";
  auto tasks = dir.path() / "tasks";
  auto imported = import_definition(
    fixture / "definition.json", fixture / "workloads.jsonl", tasks);
  REQUIRE(imported);
  auto dev = make_device(dir.path() / "work");
  auto lines = check_task_file(tasks, "mini_decode_d8", *dev, {}, {});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].what == "loads");
  CHECK_FALSE(lines[0].ok);
  CHECK(lines[0].detail.find("reference.cpp") != std::string::npos);
  // The fixture's own folder is the finished task.
  auto finished = check_task_file(fixture.parent_path(), "mini_decode", *dev,
    {}, {});
  REQUIRE(finished.size() == 2);
  CHECK(finished[1].what == "baseline");
  CHECK(finished[1].ok);
}

namespace {

/// A GPU compiler standing in for nvcc: records what it compiled; fails
/// sources holding `broken`; with `reject_others`, rejects every template
/// instance but a family's default as an invalid combination.
struct fake_gpu_compiler {
  std::vector<std::string> compiled;
  std::string broken = "\x01";
  bool reject_others = false;

  /// The task whose families define the default instances.
  const task_spec* task = nullptr;

  /// True if `c` is its family's default instance (every first value).
  bool is_default(const candidate& c) const {
    for (const auto& f : task->families)
      if (f.name == c.family) {
        for (const auto& p : f.params) {
          auto at = c.params.find(p.name);
          if (at == c.params.end() || at->second != p.values.front())
            return false;
        }
        return true;
      }
    return false;
  }

  gpu_compile_check check() {
    return {"fakecc for sm_00", [this](const task_spec&, const candidate& c) {
              compiled.push_back(c.id);
              devices::prepared p;
              if (c.source.find(broken) != std::string::npos) {
                p.status = eval_status::compile_error;
                p.detail = "the candidate does not compile";
                p.build_log = "candidate.cu(3): error: expected a ';'";
              } else if (reject_others && !c.params.empty()
                         && !is_default(c)) {
                p.status = eval_status::compile_error;
                p.build_log = "candidate.cu(9): error: static assertion "
                              "failed with \"invalid combination: too big\"";
              } else {
                // What nvcc --resource-usage reports of a kernel.
                p.build_log = "ptxas info    : Compiling entry function "
                              "'sgemm_tile' for 'sm_00'\n"
                              "ptxas info    : Used 40 registers, 4096 bytes "
                              "smem\n";
              }
              return p;
            }};
  }
};

/// A constraint that only `f`'s default instance meets.
std::string only_default(const template_family& f) {
  std::string out;
  for (const auto& p : f.params) {
    auto numeric = std::all_of(p.values.begin(), p.values.end(), [](auto& v) {
      return std::all_of(v.begin(), v.end(), [](unsigned char c) {
        return std::isdigit(c) != 0;
      });
    });
    out += (out.empty() ? "" : " && ") + p.name + " == "
           + (numeric ? p.values.front() : "\"" + p.values.front() + "\"");
  }
  return out;
}

} // namespace

TEST_CASE("a GPU task's baseline and template instances are compiled where "
          "its backend has a compiler, and its evaluation is skipped") {
  eat::test::temp_dir work;
  auto dev = make_device(work.path());
  auto task = load_task(source_dir / "kernels", "sgemm_cuda");
  REQUIRE(task);
  REQUIRE(task->backend == "cuda");
  REQUIRE_FALSE(task->families.empty());
  fake_gpu_compiler fake;
  task_check_options opts;
  opts.sample = 1;
  opts.gpu_compilers["cuda"] = fake.check();
  auto lines = check_task_spec(*task, *dev, opts, {});
  // The baseline, two instances per family, then the skipped evaluation.
  REQUIRE(lines.size() == 2 + 2 * task->families.size());
  CHECK(fake.compiled.size() == 1 + 2 * task->families.size());
  CHECK(lines.front().what == "baseline");
  // Each compile line names what the compiler reported of the kernels.
  CHECK(lines.front().detail
        == "compiles with fakecc for sm_00; not run: no cuda device here; "
           "sgemm_tile (sm_00): 40 registers, 4096 B shared, 0 B stack, 0 B "
           "spill stores, 0 B spill loads");
  CHECK_THAT(lines[1].detail,
    Catch::EndsWith("compiles; sgemm_tile (sm_00): 40 registers, 4096 B "
                    "shared, 0 B stack, 0 B spill stores, 0 B spill loads"));
  CHECK(lines.back().what == "evaluation");
  CHECK(lines.back().detail.find("skipped") != std::string::npos);
  for (const auto& l : lines) {
    INFO(l.what << " (" << l.detail << ")");
    CHECK(l.ok);
  }

  SECTION("a baseline that does not compile fails with the compiler's error") {
    fake.broken = task->baseline_source.substr(0, 200);
    opts.gpu_compilers["cuda"] = fake.check();
    auto failed = check_task_spec(*task, *dev, opts, {});
    REQUIRE_FALSE(failed.empty());
    CHECK_FALSE(failed.front().ok);
    CHECK_THAT(failed.front().detail, Catch::Contains("expected a ';'"));
  }
  SECTION("instances the template rejects as declared pass, others fail") {
    fake.reject_others = true;
    fake.task = &*task;
    opts.gpu_compilers["cuda"] = fake.check();
    auto declared = *task;
    for (auto& f : declared.families)
      f.constraints = {only_default(f)};
    size_t as_declared = 0;
    for (const auto& l : check_task_spec(declared, *dev, opts, {})) {
      INFO(l.what << " (" << l.detail << ")");
      CHECK(l.ok);
      as_declared += l.detail.find("rejected as declared") != std::string::npos;
    }
    CHECK(as_declared == task->families.size());
    for (auto& f : declared.families)
      f.constraints.clear();
    size_t undeclared = 0;
    for (const auto& l : check_task_spec(declared, *dev, opts, {}))
      undeclared
        += !l.ok
           && l.detail.find("no declared constraint") != std::string::npos;
    CHECK(undeclared == task->families.size());
  }
}

TEST_CASE("a GPU task whose backend has no compiler is only loaded") {
  eat::test::temp_dir work;
  auto dev = make_device(work.path());
  auto task = load_task(source_dir / "kernels", "gemm_n4096_k4096_hip");
  REQUIRE(task);
  task_check_options opts;
  fake_gpu_compiler fake;
  opts.gpu_compilers["cuda"] = fake.check(); // not the task's backend
  auto lines = check_task_spec(*task, *dev, opts, {});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].ok);
  CHECK_THAT(lines[0].detail, Catch::Contains("only loading was checked"));
  CHECK(fake.compiled.empty());
}

TEST_CASE("a GPU task runs its checks on a device of its backend where one "
          "can be made, and is compiled only where none can") {
  eat::test::temp_dir work;
  auto cpu = make_device(work.path());
  auto task = load_task(source_dir / "kernels", "sgemm_cuda");
  REQUIRE(task);
  // The sim device stands in for a CUDA GPU: it evaluates any candidate.
  auto gpu = devices::make_sim_device("sim-cuda", {});
  fake_gpu_compiler fake;
  task_check_options opts;
  opts.sample = 1;
  opts.gpu_compilers["cuda"] = fake.check();
  std::vector<std::string> asked;
  opts.gpu_device = [&](const std::string& backend) {
    asked.push_back(backend);
    return gpu.get();
  };
  auto lines = check_task_spec(*task, *cpu, opts, {});
  CHECK(asked == std::vector<std::string>{"cuda"});
  CHECK(fake.compiled.empty());
  // The baseline evaluated, two instances per family, no skipped line.
  REQUIRE(lines.size() == 1 + 2 * task->families.size());
  CHECK(lines.front().what == "baseline");
  CHECK_THAT(lines.front().detail, Catch::StartsWith("passed on 3 workload(s)"));
  for (const auto& l : lines) {
    INFO(l.what << " (" << l.detail << ")");
    CHECK(l.ok);
    CHECK(l.what != "evaluation");
  }

  SECTION("without a device, the stand-in compiler compiles it") {
    opts.gpu_device = [](const std::string&) -> devices::device* {
      return nullptr;
    };
    auto compiled = check_task_spec(*task, *cpu, opts, {});
    CHECK(compiled.back().what == "evaluation");
    CHECK(fake.compiled.size() == 1 + 2 * task->families.size());
  }
}
