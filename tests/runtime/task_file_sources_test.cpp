// Specification of a task file's workload axes, source files and templates
// (runtime/task_file.hpp, docs/tasks.md).

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

TEST_CASE("gemm workloads need exactly the axes m, n and k in [1, 65536]") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  auto axes = "axes = { m = 2, n = 3, k = 4 }";
  CHECK(s.failure(replace_once(text, axes, "axes = { m = 2, n = 3 }"))
        == s.message(11, 8, "workloads[0].axes.k: required key is missing"));
  CHECK(
    s.failure(replace_once(text, axes, "axes = { m = 2, n = 3, k = 4, z = 1 }"))
    == s.message(11, 31,
      "unknown key 'workloads[0].axes.z' (known keys "
      "in workloads[0].axes: m, n, k)"));
  CHECK(s.failure(replace_once(text, axes, "axes = { m = 0, n = 3, k = 4 }"))
        == s.message(11, 10,
          "workloads[0].axes.m: expected an integer in "
          "[1, 65536], got 0"));
  CHECK(
    s.failure(replace_once(text, axes, "axes = { m = 2, n = 65537, k = 4 }"))
    == s.message(11, 17,
      "workloads[0].axes.n: expected an integer in "
      "[1, 65536], got 65537"));
  CHECK(
    s.failure(replace_once(text, axes, "axes = { m = 2, n = 3, k = \"4\" }"))
    == s.message(11, 24,
      "workloads[0].axes.k: expected an integer in "
      "[1, 65536], got string \"4\""));
  CHECK(s.failure(replace_once(text, axes, "axes = [2, 3, 4]"))
        == s.message(11, 1,
          "workloads[0].axes: expected a table, got an "
          "array"));
}

TEST_CASE("source files must exist inside the task folder or another "
          "task's") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  for (const char* outside : {"../../x/baseline.cpp", "../baseline.cpp",
         "/tmp/baseline.cpp", "../x/../../baseline.cpp", "./../x/baseline.cpp"})
    CHECK(s.failure(replace_once(text, "baseline = \"baseline.cpp\"",
            "baseline = \"" + std::string{outside} + "\""))
          == s.message(7, 1,
            "baseline: expected a relative path inside the task folder or, "
            "as ../<task>/<file>, inside another task's folder, got string "
            "\""
              + std::string{outside} + "\""));
  // A sibling task's file is read from there.
  fs::create_directories(s.dir() / "twin");
  write_text(s.dir() / "twin" / "baseline.cpp", "// the twin's baseline\n");
  write_text(s.task_file(), replace_once(text, "baseline = \"baseline.cpp\"",
                              "baseline = \"../twin/baseline.cpp\""));
  auto twin = eat::load_task(s.dir(), "tiny_gemm");
  REQUIRE(twin);
  CHECK(twin->baseline_source == "// the twin's baseline\n");
  write_text(s.task_file(), text);
  auto reference = s.folder() / "reference.cpp";
  fs::remove(reference);
  CHECK(s.failure(text)
        == s.message(6, 1,
          "reference: cannot read '" + reference.string()
            + "': No such file or directory"));
  write_text(reference, "");
  CHECK(s.failure(text)
        == s.message(6, 1, "reference: '" + reference.string() + "' is empty"));
  write_text(reference, "// reference\n");
  fs::remove(s.folder() / "blocked.cpp.in");
  CHECK(s.failure(text)
        == s.message(19, 1,
          "templates[0].source: cannot read '"
            + (s.folder() / "blocked.cpp.in").string()
            + "': No such file or directory"));
}

TEST_CASE("a source file that is a symbolic link out of the tasks directory "
          "is refused and one to another task's file is read") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  eat::test::temp_dir elsewhere;
  auto secret = elsewhere.path() / "secret.cpp";
  write_text(secret, "// not the task's\n");
  auto reference = s.folder() / "reference.cpp";
  fs::remove(reference);
  fs::create_symlink(secret, reference);
  CHECK(
    s.failure(text)
    == s.message(6, 1,
      "reference: '" + reference.string() + "' leads to '"
        + fs::canonical(secret).string() + "', outside the tasks directory '"
        + fs::canonical(s.dir()).string() + "'"));
  fs::create_directories(s.dir() / "twin");
  write_text(s.dir() / "twin" / "reference.cpp", "// the twin's\n");
  fs::remove(reference);
  fs::create_symlink("../twin/reference.cpp", reference);
  auto twin = eat::load_task(s.dir(), "tiny_gemm");
  REQUIRE(twin);
  CHECK(twin->reference_source == "// the twin's\n");
}

TEST_CASE("templates need parameters, each with distinct values") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  auto no_params = text.substr(0, text.find("[[templates.params]]"));
  CHECK(s.failure(no_params)
        == s.message(17, 1, "templates[0].params: required key is missing"));
  CHECK(s.failure(no_params + "params = []\n")
        == s.message(21, 1,
          "templates[0].params: expected at least one "
          "[[templates.params]] table, got none"));
  CHECK(s.failure(replace_once(text, "values = [4, 8, \"16\"]", "values = []"))
        == s.message(27, 1,
          "templates[0].params[1].values: expected at "
          "least one value, got none"));
  CHECK(s.failure(replace_once(
          text, "values = [4, 8, \"16\"]", "values = [4, 8, \"8\"]"))
        == s.message(27, 17,
          "templates[0].params[1].values[2]: duplicate "
          "value \"8\""));
  CHECK(s.failure(
          replace_once(text, "values = [4, 8, \"16\"]", "values = [4, 8.5]"))
        == s.message(27, 14,
          "templates[0].params[1].values[1]: expected an "
          "integer or a string, got float 8.5"));
  CHECK(s.failure(replace_once(text, "name = \"block\"", "name = \"order\""))
        == s.message(26, 1,
          "templates[0].params[1].name: duplicate "
          "parameter name \"order\""));
}

TEST_CASE("placeholders and parameters of a template match one to one") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  auto source = read_text(fixture_task / "blocked.cpp.in");
  auto path = (s.folder() / "blocked.cpp.in").string();
  write_text(s.folder() / "blocked.cpp.in", source + "// {{unroll}}\n");
  CHECK(s.failure(text)
        == s.message(19, 1,
          "templates[0].source: '" + path
            + "' line 19: placeholder {{unroll}} is not a "
              "parameter of template 'blocked' "
              "(parameters: order, block)"));
  write_text(
    s.folder() / "blocked.cpp.in", replace_once(source, "{{order}}", "ijk"));
  CHECK(s.failure(text)
        == s.message(21, 1,
          "templates[0].params[0]: parameter 'order' is "
          "never used in '"
            + path + "' (no {{order}} placeholder)"));
}

TEST_CASE("a template declares the constraints between its parameters") {
  scratch_tasks s;
  auto text = scratch_tasks::original();
  auto with = [&](const std::string& constraints) {
    return replace_once(text, "source = \"blocked.cpp.in\"\n",
      "source = \"blocked.cpp.in\"\nconstraints = " + constraints + "\n");
  };
  write_text(s.task_file(),
    with(R"(["block <= 8 || order == \"ikj\"", "block % simd_floats == 0"])"));
  auto task = eat::load_task(s.dir(), "tiny_gemm");
  REQUIRE(task);
  CHECK(task->families[0].constraints
        == std::vector<std::string>{
          "block <= 8 || order == \"ikj\"", "block % simd_floats == 0"});
  CHECK(s.failure(with(R"(["block >= 4", "blok > 4"])"))
        == s.message(20, 30,
          "templates[0].constraints[1]: \"blok > 4\": unknown name 'blok' "
          "at column 1 (parameters: order, block; target facts: "
          "simd_floats, vector_registers)"));
  CHECK(s.failure(with(R"(["order == \"jik\""])"))
        == s.message(20, 16,
          "templates[0].constraints[0]: \"order == \\\"jik\\\"\": \"jik\" is "
          "not a value of order (ijk, ikj) at column 10"));
  CHECK(s.failure(with(R"(["block >= 8 || order == \"ikj\""])"))
        == s.message(20, 16,
          "templates[0].constraints[0]: \"block >= 8 || order == "
          "\\\"ikj\\\"\": the default instance (every parameter at its first "
          "value) violates it"));
  CHECK(s.failure(with(R"("block > 4")"))
        == s.message(20, 1,
          "templates[0].constraints: expected an array of strings such as "
          "\"mc >= mr\", got "
          "string \"block > 4\""));
}
