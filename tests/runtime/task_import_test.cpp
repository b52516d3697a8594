// Specification of `eat tasks import` (runtime/flashinfer_import.hpp): a
// FlashInfer-Bench definition and its workloads become a task folder whose
// loading names what is still missing, until it is written.

#include "runtime/flashinfer_import.hpp"

#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "tests/support/temp_dir.hpp"
#include "tests/support/text_files.hpp"

#include "actors/protocol/error.hpp"
#include "runtime/task_file.hpp"

namespace fs = std::filesystem;

namespace {

using eat::test::read_text;
using eat::test::write_text;

const fs::path mini_decode
  = fs::path{EAT_SOURCE_DIR} / "tests/devices/fixtures/mini_decode";

size_t count_lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

} // namespace

TEST_CASE("importing a definition creates a task folder and lists what is "
          "still needed") {
  eat::test::temp_dir root;
  auto tasks = root.path() / "tasks";
  auto result = eat::import_definition(
    mini_decode / "definition.json", mini_decode / "workloads.jsonl", tasks);
  REQUIRE(result);
  CHECK(result->task == "mini_decode_d8");
  CHECK(result->workloads == 2);
  auto folder = tasks / "mini_decode_d8";
  CHECK(read_text(folder / "definition.json")
        == read_text(mini_decode / "definition.json"));
  // Only the two lines of this definition are kept.
  auto lines = read_text(folder / "workloads.jsonl");
  CHECK(count_lines(lines) == 2);
  CHECK(lines.find("some_other_definition") == std::string::npos);
  REQUIRE(result->todo.size() == 5); // reference, baseline, formulas, 2 ints
  CHECK_THAT(result->todo[0], Catch::Contains("reference.cpp"));
  CHECK_THAT(result->todo[4], Catch::Contains("[inputs.indices]"));
  // Until they are written, loading names the missing reference.
  auto task = eat::load_task(tasks, "mini_decode_d8");
  REQUIRE_FALSE(task);
  auto why = eat::render(task.error());
  CHECK_THAT(why, Catch::Contains("reference: cannot read"));
  CHECK_THAT(why, Catch::Contains("flops: required key is missing"));
  CHECK_THAT(why, Catch::Contains("integer inputs need a generator"));
  // Written, the task loads.
  for (const char* file : {"reference.cpp", "baseline.cpp"})
    fs::copy_file(mini_decode / file, folder / file);
  auto toml = read_text(folder / "task.toml");
  CHECK_THAT(toml, Catch::Contains("# [tolerances.out]\n# matched_ratio = "));
  toml += "flops = \"4 * num_indices * dim\"\nbytes = \"2 * num_indices\"\n"
          "[inputs.indptr]\ngenerator = \"indptr\"\ntotal = \"num_indices\"\n"
          "[inputs.indices]\ngenerator = \"permutation\"\n"
          "range = \"num_pages\"\n";
  write_text(folder / "task.toml", toml);
  auto loaded = eat::load_task(tasks, "mini_decode_d8");
  INFO((loaded ? std::string{} : eat::render(loaded.error())));
  REQUIRE(loaded);
  CHECK(loaded->workloads.size() == 2);
}

TEST_CASE("import never overwrites an existing task folder") {
  eat::test::temp_dir root;
  auto tasks = root.path() / "tasks";
  fs::create_directories(tasks / "mini_decode_d8");
  write_text(tasks / "mini_decode_d8" / "task.toml", "# mine\n");
  auto result = eat::import_definition(
    mini_decode / "definition.json", mini_decode / "workloads.jsonl", tasks);
  REQUIRE_FALSE(result);
  CHECK_THAT(eat::render(result.error()), Catch::Contains("already exists"));
  CHECK(read_text(tasks / "mini_decode_d8" / "task.toml") == "# mine\n");
}

TEST_CASE("import refuses workloads with no line for the definition and "
          "malformed files, naming them") {
  eat::test::temp_dir root;
  auto other = root.path() / "other.jsonl";
  write_text(other,
    R"({"definition": "x", "workload": {"axes": {}, "inputs": {}}})"
    "\n");
  auto none = eat::import_definition(
    mini_decode / "definition.json", other, root.path() / "tasks");
  REQUIRE_FALSE(none);
  CHECK_THAT(eat::render(none.error()),
    Catch::Contains("other.jsonl: no workload for definition "
                    "\"mini_decode_d8\""));
  CHECK_FALSE(fs::exists(root.path() / "tasks" / "mini_decode_d8"));
  auto bad = root.path() / "bad.json";
  write_text(
    bad, R"({"name": "x", "op_type": "y", "axes": {"n": {"type": "var"}},
    "inputs": {"a": {"shape": ["m"], "dtype": "float32"}},
    "outputs": {"b": {"shape": ["n"], "dtype": "float8_e4m3fn"}}})");
  auto malformed = eat::import_definition(bad, other, root.path() / "tasks");
  REQUIRE_FALSE(malformed);
  auto why = eat::render(malformed.error());
  CHECK_THAT(why, Catch::Contains("bad.json: inputs.a.shape[0]: unknown axis"));
  CHECK_THAT(
    why, Catch::Contains("bad.json: outputs.b.dtype: expected one of"));
}

TEST_CASE("an axis or tensor name that is not a plain name is refused, and "
          "an op_type with a newline and quotes stays inside its comment") {
  eat::test::temp_dir root;
  auto tasks = root.path() / "tasks";
  auto def_text = read_text(mini_decode / "definition.json");
  auto replaced = [&](const std::string& from, const std::string& to) {
    auto text = def_text;
    auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    auto file = root.path() / "definition.json";
    write_text(file, text);
    return file;
  };
  // An input named so that the skeleton's [inputs.*] hint became live TOML.
  auto bad_input = eat::import_definition(
    replaced("\"indptr\":", R"("x\n[inputs.zz]\nb = \"":)"),
    mini_decode / "workloads.jsonl", tasks);
  REQUIRE_FALSE(bad_input);
  CHECK_THAT(eat::render(bad_input.error()),
    Catch::Contains(R"(inputs: "x\u000a[inputs.zz]\u000ab = \"" is not a )"
                    "name (up to 64 letters, digits and '_', not starting "
                    "with a digit)"));
  auto bad_axis = eat::import_definition(
    replaced("\"dim\":", R"("1dim":)"), mini_decode / "workloads.jsonl", tasks);
  REQUIRE_FALSE(bad_axis);
  CHECK_THAT(eat::render(bad_axis.error()),
    Catch::Contains(R"(axes: "1dim" is not a name)"));
  // op_type is free text: quoted in the skeleton's comment, the task.toml
  // still parses and says what is missing.
  auto def = replaced(
    R"("op_type": ")", R"("op_type": "x\")\nexpert = \"/etc/passwd)");
  auto imported
    = eat::import_definition(def, mini_decode / "workloads.jsonl", tasks);
  REQUIRE(imported);
  auto toml = read_text(tasks / "mini_decode_d8" / "task.toml");
  CHECK(toml.find("\nexpert") == std::string::npos);
  auto task = eat::load_task(tasks, "mini_decode_d8");
  REQUIRE_FALSE(task);
  auto why = eat::render(task.error());
  CHECK_THAT(why, Catch::Contains("reference: cannot read"));
  CHECK(why.find("TOML syntax error") == std::string::npos);
}
