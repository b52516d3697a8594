// Specification of task files and template rendering (runtime/task_file.hpp,
// docs/tasks.md).

#include "runtime/task_file.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/temp_dir.hpp"
#include "tests/support/text_files.hpp"

#include "actors/protocol/error.hpp"

namespace fs = std::filesystem;

namespace {

using eat::test::read_text;
using eat::test::replace_once;
using eat::test::write_text;

const fs::path fixture_tasks
  = fs::path{EAT_SOURCE_DIR} / "tests/runtime/fixtures/tasks";
const fs::path fixture_task = fixture_tasks / "tiny_gemm";

using eat::test::temp_dir;

/// A temporary tasks directory holding a copy of the tiny_gemm fixture.
class scratch_tasks {
public:
  scratch_tasks() {
    fs::create_directories(dir());
    fs::copy(fixture_task, folder(), fs::copy_options::recursive);
  }

  fs::path dir() const {
    return root_.path() / "tasks";
  }

  fs::path folder() const {
    return dir() / "tiny_gemm";
  }

  fs::path task_file() const {
    return folder() / "task.toml";
  }

  /// The fixture's task.toml text.
  static std::string original() {
    return read_text(fixture_task / "task.toml");
  }

  /// Loads tiny_gemm after replacing its task.toml with `text`; it must
  /// fail with invalid_task. Returns the rendered error.
  std::string failure(const std::string& text) {
    write_text(task_file(), text);
    auto task = eat::load_task(dir(), "tiny_gemm");
    REQUIRE_FALSE(task);
    CHECK(eat::code_of(task.error()) == eat::error::invalid_task);
    return eat::render(task.error());
  }

  /// The rendered error of one problem at line:column of the task file.
  std::string message(int line, int column, const std::string& what) const {
    return "invalid_task: " + task_file().string() + ":" + std::to_string(line)
           + ":" + std::to_string(column) + ": " + what;
  }

private:
  temp_dir root_;
};

} // namespace

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
  for (const char* outside :
    {"../../x/baseline.cpp", "../baseline.cpp", "/tmp/baseline.cpp",
      "../x/../../baseline.cpp", "./../x/baseline.cpp"})
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
          "is refused; one to another task's file is read") {
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

TEST_CASE("placeholders are {{identifier}}, found with their lines") {
  auto found = eat::find_placeholders("a {{x}} b\n{{ y }} {{1,2}} {{{z_1}}}\n"
                                      "int v[1][1] = {{w}, {u}};");
  REQUIRE(found.size() == 2);
  CHECK(found[0].name == "x");
  CHECK(found[0].line == 1);
  CHECK(found[0].offset == 2);
  CHECK(found[1].name == "z_1");
  CHECK(found[1].line == 2);
  CHECK(found[1].offset == 27);
}

namespace {

eat::template_family tiled_family() {
  return {"tiled", "for {{order}} tile {{tile}} {{tile}}; int a[1][1] = {{0}};",
    {{"order", {"ijk", "kji"}}, {"tile", {"8", "16"}}}};
}

std::string render_failure(
  const eat::template_family& family, const eat::param_map& params) {
  auto source = eat::render_template(family, params);
  REQUIRE_FALSE(source);
  CHECK(eat::code_of(source.error()) == eat::error::invalid_task);
  return eat::render(source.error());
}

} // namespace

TEST_CASE("rendering a template replaces every placeholder") {
  auto source
    = eat::render_template(tiled_family(), {{"order", "kji"}, {"tile", "16"}});
  REQUIRE(source);
  CHECK(*source == "for kji tile 16 16; int a[1][1] = {{0}};");
}

TEST_CASE("rendering fails on a missing, unknown or out-of-space value") {
  auto family = tiled_family();
  CHECK(render_failure(family, {{"order", "ijk"}})
        == "invalid_task: template 'tiled': parameter 'tile' has no value");
  CHECK(render_failure(family, {{"order", "ijk"}, {"tile", "8"}, {"u", "2"}})
        == "invalid_task: template 'tiled': no parameter 'u' (parameters: "
           "order, tile)");
  CHECK(render_failure(family, {{"order", "ijk"}, {"tile", "32"}})
        == "invalid_task: template 'tiled': tile = \"32\" is not one of 8, "
           "16");
  family.source += "\n{{unroll}}";
  CHECK(render_failure(family, {{"order", "ijk"}, {"tile", "8"}})
        == "invalid_task: template 'tiled': placeholder {{unroll}} on line 2 "
           "names no parameter");
}

TEST_CASE("the sgemm task of the repository loads and renders") {
  // Needs kernels/sgemm/{reference.cpp,baseline.cpp,tiled.cpp.in}.
  auto task = eat::load_task(fs::path{EAT_SOURCE_DIR} / "kernels", "sgemm");
  if (!task)
    FAIL(eat::render(task.error()));
  CHECK(task->kind == "gemm");
  REQUIRE(task->workloads.size() == 3);
  CHECK(task->workloads[2].name == "m200_n136_k72");
  REQUIRE(task->families.size() == 3); // tiled, blocked, packed
  CHECK(task->families[0].name == "tiled");
  CHECK_FALSE(task->expert_source.empty());
  const auto& tiled = task->families[0];
  REQUIRE(tiled.params.size() == 4);
  eat::param_map choice;
  for (const auto& p : tiled.params)
    choice[p.name] = p.values.front();
  auto source = eat::render_template(tiled, choice);
  REQUIRE(source);
  CHECK(eat::find_placeholders(*source).empty());
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
