// Specification of task files (runtime/task_file.hpp, docs/tasks.md): what
// a task holds, and how a task file's mistakes are reported. Sources and
// templates: task_file_sources_test.cpp; rendering: task_template_test.cpp.

#include "runtime/task_file.hpp"

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "tests/runtime/scratch_tasks.hpp"

namespace fs = std::filesystem;

using eat::test::fixture_task;
using eat::test::fixture_tasks;
using eat::test::read_text;
using eat::test::replace_once;
using eat::test::scratch_tasks;
using eat::test::write_text;

TEST_CASE("a task loads with its sources, workloads and templates") {
  auto task = eat::load_task(fixture_tasks, "tiny_gemm");
  REQUIRE(task);
  CHECK(task->name == "tiny_gemm");
  CHECK(task->kind == "gemm");
  CHECK(task->dtype == "float32");
  CHECK(task->atol == 1e-4);
  CHECK(task->rtol == 1e-4);
  CHECK(task->reference_source == read_text(fixture_task / "reference.cpp"));
  CHECK(task->baseline_source == read_text(fixture_task / "baseline.cpp"));
  REQUIRE(task->workloads.size() == 2);
  CHECK(task->workloads[0].name == "m2_n3_k4");
  CHECK(task->workloads[0].axes
        == std::map<std::string, int64_t>{{"m", 2}, {"n", 3}, {"k", 4}});
  CHECK(task->workloads[1].name == "m16_n16_k16");
  REQUIRE(task->families.size() == 1);
  const auto& family = task->families[0];
  CHECK(family.name == "blocked");
  CHECK(family.source == read_text(fixture_task / "blocked.cpp.in"));
  REQUIRE(family.params.size() == 2);
  CHECK(family.params[0].name == "order");
  CHECK(family.params[0].values == std::vector<std::string>{"ijk", "ikj"});
  CHECK(family.params[1].name == "block");
  CHECK(family.params[1].values == std::vector<std::string>{"4", "8", "16"});
}

TEST_CASE("tolerances are read when given") {
  scratch_tasks s;
  auto text = scratch_tasks::original() + "\n";
  write_text(s.task_file(), replace_once(text, "dtype = \"float32\"\n",
                              "dtype = \"float32\"\natol = 0\nrtol = 2e-3\n"));
  auto task = eat::load_task(s.dir(), "tiny_gemm");
  REQUIRE(task);
  CHECK(task->atol == 0);
  CHECK(task->rtol == 2e-3);
}

TEST_CASE("a matched ratio below 1 is read together with its maximum "
          "error") {
  scratch_tasks s;
  write_text(s.task_file(),
    replace_once(scratch_tasks::original(), "dtype = \"float32\"\n",
      "dtype = \"float32\"\nmatched_ratio = 0.999\nmax_error = 0.5\n"));
  auto task = eat::load_task(s.dir(), "tiny_gemm");
  REQUIRE(task);
  CHECK(task->matched_ratio == 0.999);
  CHECK(task->max_error == 0.5);
  CHECK(task->atol == 1e-4);
}

TEST_CASE("a task may allow outputs that differ from run to run") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  auto task = eat::load_task(s.dir(), "tiny_gemm");
  REQUIRE(task);
  CHECK(task->deterministic);
  write_text(s.task_file(), replace_once(text, "dtype = \"float32\"\n",
                              "dtype = \"float32\"\ndeterministic = false\n"));
  task = eat::load_task(s.dir(), "tiny_gemm");
  REQUIRE(task);
  CHECK_FALSE(task->deterministic);
  CHECK(
    s.failure(replace_once(text, "dtype = \"float32\"\n",
      "dtype = \"float32\"\ndeterministic = \"no\"\n"))
    == s.message(6, 1, "deterministic: expected a boolean, got string \"no\""));
}

TEST_CASE("a task of a builtin kind may name the definition its traces "
          "carry") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  auto task = eat::load_task(s.dir(), "tiny_gemm");
  REQUIRE(task);
  CHECK(task->trace_definition.empty());
  write_text(s.task_file(), replace_once(text, "dtype = \"float32\"\n",
                              "dtype = \"float32\"\n"
                              "trace_definition = \"gemm_fp32\"\n"));
  task = eat::load_task(s.dir(), "tiny_gemm");
  REQUIRE(task);
  CHECK(task->trace_definition == "gemm_fp32");
  CHECK(s.failure(replace_once(text, "dtype = \"float32\"\n",
          "dtype = \"float32\"\ntrace_definition = \"a b\"\n"))
        == s.message(6, 1,
          "trace_definition: expected a non-empty name of letters, digits, "
          "'_', '-' and '.', got string \"a b\""));
}

TEST_CASE("a matched ratio needs a maximum error, and both their ranges are "
          "checked") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  auto with = [&](const std::string& lines) {
    return s.failure(replace_once(
      text, "dtype = \"float32\"\n", "dtype = \"float32\"\n" + lines));
  };
  CHECK(with("matched_ratio = 0.99\n")
        == s.message(6, 1,
          "matched_ratio: a matched ratio below 1 needs max_error, a cap on "
          "every element's |got - ref| (BENCHMARK-PROTOCOL.md section 2)"));
  CHECK(with("matched_ratio = 1.5\nmax_error = 1\n")
        == s.message(
          6, 1, "matched_ratio: expected a number in (0, 1], got float 1.5"));
  CHECK(with("matched_ratio = 0.9\nmax_error = 0\n")
        == s.message(7, 1, "max_error: expected a finite number > 0, got 0"));
  CHECK(with("max_error = inf\n")
        == s.message(
          6, 1, "max_error: expected a finite number > 0, got float inf"));
}

TEST_CASE("list_tasks names the folders that hold a task.toml, sorted") {
  scratch_tasks s;
  write_text(s.dir() / "b_task" / "task.toml", "name = \"b_task\"\n");
  write_text(s.dir() / "a_task" / "task.toml", "");
  write_text(s.dir() / "not_a_task" / "notes.txt", "no task file here\n");
  write_text(s.dir() / "stray.toml", "");
  auto names = eat::list_tasks(s.dir());
  REQUIRE(names);
  CHECK(*names == std::vector<std::string>{"a_task", "b_task", "tiny_gemm"});
  auto missing = eat::list_tasks(s.dir() / "absent");
  REQUIRE_FALSE(missing);
  CHECK(eat::code_of(missing.error()) == eat::error::invalid_task);
  CHECK_THAT(eat::render(missing.error()),
    Catch::StartsWith("invalid_task: cannot list tasks directory '"
                      + (s.dir() / "absent").string() + "': "));
}

TEST_CASE("a missing task folder or task file is reported with its path") {
  scratch_tasks s;
  auto absent = eat::load_task(s.dir(), "absent");
  REQUIRE_FALSE(absent);
  CHECK(eat::render(absent.error())
        == "invalid_task: no task 'absent' in tasks directory '"
             + s.dir().string() + "' (expected '"
             + (s.dir() / "absent" / "task.toml").string() + "')");
  fs::remove(s.task_file());
  auto no_file = eat::load_task(s.dir(), "tiny_gemm");
  REQUIRE_FALSE(no_file);
  CHECK(eat::render(no_file.error())
        == "invalid_task: cannot read task file '" + s.task_file().string()
             + "': No such file or directory");
  auto bad_name = eat::load_task(s.dir(), "../tasks");
  REQUIRE_FALSE(bad_name);
  CHECK_THAT(eat::render(bad_name.error()),
    Catch::StartsWith("invalid_task: invalid task name \"../tasks\""));
}

TEST_CASE("a task file with a TOML syntax error gives the position") {
  scratch_tasks s;
  CHECK(s.failure("name = \"tiny_gemm\"\nkind = gemm\n")
        == s.message(2, 8,
          "TOML syntax error: Error while parsing value: "
          "could not determine value type"));
}

TEST_CASE("unknown keys in a task file are reported") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  CHECK_THAT(s.failure(replace_once(text, "kind = ", "flavour = 1\nkind = ")),
    Catch::Contains(
      ":4:1: unknown key 'flavour' (known keys: name, "
      "description, kind, backend, dtype, atol, rtol, matched_ratio, "
      "max_error, reference, "
      "baseline, expert, expert_libs, workloads, templates, deterministic, "
      "trace_definition)"));
  CHECK_THAT(s.failure(replace_once(text, "name = \"m2_n3_k4\"\n",
               "name = \"m2_n3_k4\"\nweight = 2\n")),
    Catch::Contains(":11:1: unknown key 'workloads[0].weight' (known "
                    "keys in workloads[0]: name, axes)"));
  CHECK_THAT(s.failure(replace_once(text, "source = \"blocked.cpp.in\"\n",
               "source = \"blocked.cpp.in\"\nlang = 1\n")),
    Catch::Contains(":20:1: unknown key 'templates[0].lang'"));
  CHECK_THAT(s.failure(replace_once(text, "values = [\"ijk\", \"ikj\"]\n",
               "values = [\"ijk\", \"ikj\"]\nstep = 1\n")),
    Catch::Contains(":24:1: unknown key 'templates[0].params[0].step' "
                    "(known keys in templates[0].params[0]: name, "
                    "values)"));
}

TEST_CASE("the task name must equal its folder name") {
  scratch_tasks s;
  auto text = replace_once(
    scratch_tasks::original(), "name = \"tiny_gemm\"", "name = \"small_gemm\"");
  CHECK(s.failure(text)
        == s.message(2, 1,
          "name: expected \"tiny_gemm\" (the folder name), "
          "got string \"small_gemm\""));
  auto missing
    = replace_once(scratch_tasks::original(), "name = \"tiny_gemm\"\n", "");
  CHECK(s.failure(missing)
        == "invalid_task: " + s.task_file().string()
             + ": name: required key is missing");
}

TEST_CASE("kind must be a known kind and dtype float32") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  CHECK(s.failure(replace_once(text, "kind = \"gemm\"", "kind = \"conv\""))
        == s.message(4, 1,
          "kind: expected one of \"gemm\", \"rmsnorm\", \"softmax\", "
          "\"definition\", "
          "got string \"conv\""));
  CHECK(s.failure(replace_once(text, "dtype = \"float32\"", "dtype = \"bf16\""))
        == s.message(5, 1,
          "dtype: expected \"float32\" (the only dtype so "
          "far), got string \"bf16\""));
  CHECK_THAT(s.failure(replace_once(text, "kind = \"gemm\"\n", "")),
    Catch::Contains(": kind: required key is missing"));
}

TEST_CASE("tolerances must be non-negative numbers") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  CHECK(s.failure(replace_once(
          text, "dtype = \"float32\"\n", "dtype = \"float32\"\natol = -1e-5\n"))
        == s.message(6, 1, "atol: expected a number >= 0, got float -1e-05"));
  CHECK(s.failure(replace_once(text, "dtype = \"float32\"\n",
          "dtype = \"float32\"\nrtol = \"tight\"\n"))
        == s.message(6, 1,
          "rtol: expected a number >= 0, got string "
          "\"tight\""));
}

TEST_CASE("a task needs at least one workload, each named once") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  auto none = text.substr(0, text.find("[[workloads]]"))
              + text.substr(text.find("[[templates]]"));
  CHECK(s.failure(none)
        == "invalid_task: " + s.task_file().string()
             + ": workloads: expected at least one [[workloads]] table, got "
               "none");
  CHECK_THAT(s.failure("workloads = []\n" + none),
    Catch::Contains(":1:1: workloads: expected at least one "
                    "[[workloads]] table, got none"));
  CHECK(s.failure(
          replace_once(text, "name = \"m16_n16_k16\"", "name = \"m2_n3_k4\""))
        == s.message(14, 8,
          "workloads[1].name: duplicate workload name "
          "\"m2_n3_k4\""));
}

TEST_CASE("every problem of a task file is reported at once, in file order") {
  scratch_tasks s;
  auto text = replace_once(
    scratch_tasks::original(), "dtype = \"float32\"", "dtype = \"bf16\"");
  text = replace_once(
    text, "axes = { m = 2, n = 3, k = 4 }", "axes = { m = 2, n = 3, k = 0 }");
  CHECK(s.failure(text)
        == s.message(5, 1,
             "dtype: expected \"float32\" (the only dtype so far), got "
             "string \"bf16\"")
             + "\n" + s.task_file().string()
             + ":11:24: workloads[0].axes.k: expected an integer in [1, "
               "65536], got 0");
}

TEST_CASE("a task names the backend its sources are written for") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  CHECK_THAT(
    s.failure(replace_once(text, "kind = ", "backend = \"opencl\"\nkind = ")),
    Catch::Contains(
      "backend: expected \"cpu\", \"cuda\" or \"hip\", got string \"opencl\""));
  auto text_cuda = replace_once(text, "kind = ", "backend = \"cuda\"\nkind = ");
  write_text(s.task_file(), text_cuda);
  auto task = eat::load_task(s.dir(), "tiny_gemm");
  REQUIRE(task);
  CHECK(task->backend == "cuda");
}
