// Specification of definition tasks: definition.json, workloads.jsonl and
// the definition keys of task.toml, resolved into self-contained workloads
// (runtime/task_definition.hpp, runtime/axis_formula.hpp, docs/tasks.md).

#include "runtime/task_definition.hpp"

#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/temp_dir.hpp"
#include "tests/support/text_files.hpp"

#include "actors/protocol/error.hpp"
#include "runtime/axis_formula.hpp"
#include "runtime/task_file.hpp"

namespace fs = std::filesystem;

namespace {

using eat::test::read_text;
using eat::test::replace_once;
using eat::test::write_text;

const fs::path fixture
  = fs::path{EAT_SOURCE_DIR} / "tests/devices/fixtures/mini_decode";

/// A temporary tasks directory holding a copy of the mini_decode fixture.
class scratch_task {
public:
  scratch_task() {
    fs::create_directories(dir());
    fs::copy(fixture, folder(), fs::copy_options::recursive);
  }

  fs::path dir() const {
    return root_.path() / "tasks";
  }

  fs::path folder() const {
    return dir() / "mini_decode";
  }

  /// Replaces the one occurrence of `from` by `to` in the task's file `name`.
  void edit(
    const std::string& name, const std::string& from, const std::string& to) {
    write_text(
      folder() / name, replace_once(read_text(folder() / name), from, to));
  }

  caf::expected<eat::task_spec> load(
    const eat::task_overrides& overrides = {}) const {
    return eat::load_task(dir(), "mini_decode", overrides);
  }

  /// The loader's message; fails the test if the task loads.
  std::string error(const eat::task_overrides& overrides = {}) const {
    auto task = load(overrides);
    REQUIRE_FALSE(task);
    return eat::render(task.error());
  }

private:
  eat::test::temp_dir root_;
};

} // namespace

TEST_CASE("a definition task loads with every workload resolved") {
  scratch_task t;
  auto task = t.load();
  REQUIRE(task);
  CHECK(task->kind == "definition");
  CHECK(task->dtype == "bfloat16");
  CHECK(task->definition == read_text(fixture / "definition.json"));
  CHECK(task->flops == "4 * num_indices * dim");
  // The line for another definition is left out.
  REQUIRE(task->workloads.size() == 2);
  const auto& w = task->workloads[0];
  CHECK(w.name == "a1b2c3d4");
  CHECK(w.abi_axes == std::vector<int64_t>{3, 40, 4, 25, 8});
  CHECK(w.axes.at("dim") == 8);
  REQUIRE(w.inputs.size() == 5);
  CHECK(w.inputs[0].name == "q");
  CHECK(w.inputs[0].dtype == "bfloat16");
  CHECK(w.inputs[0].shape == std::vector<int64_t>{3, 8});
  CHECK(w.inputs[0].generator == "random");
  CHECK(w.inputs[2].generator == "indptr");
  CHECK(w.inputs[2].extent == 25);
  CHECK(w.inputs[3].generator == "permutation");
  CHECK(w.inputs[3].extent == 40);
  CHECK(w.inputs[4].scalar);
  CHECK(w.inputs[4].value == 0.35);
  REQUIRE(w.outputs.size() == 3);
  CHECK(w.outputs[0].name == "out");
  CHECK(w.outputs[0].atol == 1e-2); // bfloat16 default
  CHECK(w.outputs[1].atol == 1e-4); // [tolerances.lse]
  CHECK(w.outputs[2].atol == 0);    // int32: exact
  CHECK(w.flops == 4.0 * 25 * 8);
  CHECK(w.bytes == 2.0 * 25 * 8 + 2 * 3 * 8 + 4 * 4 + 4 * 25 + 8 * 3);
  CHECK(task->workloads[1].inputs[4].value == 0.125);
}

TEST_CASE("a workloads file given at load time replaces the task's own") {
  scratch_task t;
  // Only the second workload of the task's file, in a file of its own.
  auto text = read_text(t.folder() / "workloads.jsonl");
  auto second = text.substr(text.find("{\"definition\": \"mini_decode_d8\"", 1));
  write_text(t.folder() / "few.jsonl", second);
  auto task = t.load({"few.jsonl"});
  REQUIRE(task);
  REQUIRE(task->workloads.size() == 1);
  CHECK(task->workloads[0].axes.at("batch_size") == 5);
  // An absolute path, outside the task folder, works as well.
  auto elsewhere = t.dir() / "elsewhere.jsonl";
  write_text(elsewhere, second);
  auto moved = t.load({elsewhere});
  REQUIRE(moved);
  CHECK(moved->workloads.size() == 1);
  // The task's own file is untouched by either.
  CHECK(t.load()->workloads.size() == 2);
}

TEST_CASE("a workloads file given at load time is checked like the task's") {
  scratch_task t;
  CHECK_THAT(t.error({"missing.jsonl"}),
    Catch::Contains("workloads: cannot read '"
                    + (t.folder() / "missing.jsonl").string()
                    + "' (given instead of the task's workloads)"));
  write_text(t.folder() / "bad.jsonl",
    replace_once(read_text(t.folder() / "workloads.jsonl"),
      R"("len_indptr": 4)", R"("len_indptr": 5)"));
  CHECK_THAT(t.error({"bad.jsonl"}),
    Catch::Contains("bad.jsonl: line 1: violates the constraint"));
}

TEST_CASE("only a definition task's workloads can be replaced") {
  auto sgemm = eat::load_task(
    fs::path{EAT_SOURCE_DIR} / "kernels", "sgemm", {"workloads.jsonl"});
  REQUIRE_FALSE(sgemm);
  CHECK_THAT(eat::render(sgemm.error()),
    Catch::Contains("can only replace a definition task's workloads; this "
                    "task lists its own as [[workloads]] tables"));
}

TEST_CASE("the FlashInfer-Bench tasks run all of its workloads on request") {
  const auto kernels = fs::path{EAT_SOURCE_DIR} / "kernels";
  struct expected {
    std::string folder;
    std::vector<std::string> tasks;
    size_t all, own;
  };
  const std::string mla = "mla_paged_decode_h16_ckv512_kpe64_ps1";
  const std::string gqa = "gqa_paged_decode_h32_kv4_d128_ps1";
  const std::string gemm = "gemm_n4096_k4096";
  for (const auto& e : {expected{mla, {mla, mla + "_cuda", mla + "_hip"}, 47, 9},
         expected{gqa, {gqa, gqa + "_cuda", gqa + "_hip"}, 48, 9},
         expected{gemm, {gemm, gemm + "_hip"}, 43, 6}}) {
    auto all = kernels / e.folder / "workloads_flashinfer.jsonl";
    for (const auto& task : e.tasks) {
      CAPTURE(task);
      auto spec = eat::load_task(kernels, task, {all});
      REQUIRE(spec);
      CHECK(spec->workloads.size() == e.all);
      CHECK(eat::load_task(kernels, task)->workloads.size() == e.own);
    }
  }
}

TEST_CASE("a malformed definition.json is reported with its file and field") {
  scratch_task t;
  t.edit("definition.json", R"("dtype": "int32" },
    "indices")",
    R"("dtype": "int8" },
    "indices")");
  t.edit(
    "definition.json", R"(["num_pages", "dim"])", R"(["num_page", "dim"])");
  auto why = t.error();
  CHECK_THAT(why, Catch::Contains("definition.json: inputs.indptr.dtype: "
                                  "expected one of"));
  CHECK_THAT(why, Catch::Contains("definition.json: inputs.pages.shape[0]: "
                                  "unknown axis \"num_page\""));
}

TEST_CASE("a definition.json that is not JSON is reported as such") {
  scratch_task t;
  write_text(t.folder() / "definition.json", "{ \"name\": ");
  CHECK_THAT(t.error(), Catch::Contains("definition.json: not JSON"));
}

TEST_CASE("a safetensors input is refused naming the JSONL line") {
  scratch_task t;
  // Line 1's q (line 4 has one too).
  t.edit("workloads.jsonl",
    R"("num_indices": 25}, "inputs": {"q": {"type": "random"})",
    R"("num_indices": 25}, "inputs": {"q": {"type": "safetensors", "path": "x.safetensors", "tensor_key": "q"})");
  auto why = t.error();
  CHECK_THAT(why, Catch::Contains("workloads.jsonl: line 1: inputs.q: input "
                                  "'q' is loaded from a safetensors file"));
}

TEST_CASE("workload lines with bad axes or values name their line") {
  scratch_task t;
  t.edit("workloads.jsonl", R"("num_pages": 64, )", "");
  t.edit("workloads.jsonl", R"("value": 0.35)", R"("value": "big")");
  auto why = t.error();
  CHECK_THAT(why, Catch::Contains("line 4: axes.num_pages: value of var axis "
                                  "is missing"));
  CHECK_THAT(why, Catch::Contains("line 1: inputs.scale.value: expected a "
                                  "number"));
  // An input the definition does not have is a typo, not something to drop.
  scratch_task u;
  u.edit("workloads.jsonl", R"("value": 0.35)",
    R"("value": 0.35}, "zz": {"type": "random")");
  CHECK_THAT(u.error(),
    Catch::Contains("line 1: inputs.zz: not an input of mini_decode_d8"));
}

TEST_CASE("a workload violating an axis constraint names the constraint") {
  scratch_task t;
  t.edit("workloads.jsonl", R"("len_indptr": 4)", R"("len_indptr": 5)");
  CHECK_THAT(t.error(),
    Catch::Contains("line 1: violates the constraint \"len_indptr == "
                    "batch_size + 1\""));
}

TEST_CASE("a workload with a tensor the harness cannot hold is refused when "
          "the task loads, not at every evaluation") {
  // 2^31 - 1 pages of 16: more than 2^34 elements. A run spent its whole
  // budget on such a workload, every candidate rejected.
  scratch_task t;
  t.edit("definition.json", R"("dim": { "type": "const", "value": 8 })",
    R"("dim": { "type": "const", "value": 16 })");
  t.edit("workloads.jsonl", R"("num_pages": 40)", R"("num_pages": 2147483647)");
  CHECK_THAT(t.error(), Catch::Contains("line 1: input 'pages' has a negative "
                                        "dimension or more than 2^34 "
                                        "elements"));
}

TEST_CASE("a workloads file without a line for the definition is refused") {
  scratch_task t;
  write_text(t.folder() / "workloads.jsonl",
    R"({"definition": "other", "workload": {"axes": {}, "inputs": {}}})"
    "\n");
  CHECK_THAT(t.error(), Catch::Contains("no workload for definition "
                                        "\"mini_decode_d8\""));
}

TEST_CASE("integer inputs need a generator, and generators must fit") {
  scratch_task t;
  t.edit("task.toml",
    "[inputs.indptr]\ngenerator = \"indptr\"\n"
    "total = \"num_indices\"\n",
    "");
  CHECK_THAT(t.error(), Catch::Contains("input 'indptr' is int32: integer "
                                        "inputs need a generator"));
  scratch_task u;
  u.edit("workloads.jsonl", R"("num_pages": 40)", R"("num_pages": 20)");
  CHECK_THAT(u.error(), Catch::Contains("line 1: input 'indices' "
                                        "(permutation) needs 25 distinct ids "
                                        "from a range of only 20"));
  scratch_task v;
  v.edit("task.toml", "range = \"num_pages\"", "range = \"pages\"");
  CHECK_THAT(v.error(), Catch::Contains("inputs.indices.range: unknown axis"));
}

TEST_CASE("task.toml's formulas, tolerances and keys are checked") {
  scratch_task t;
  t.edit("task.toml", "flops = \"4 * num_indices * dim\"",
    "flops = \"4 * num_indice * dim\"");
  t.edit("task.toml", "[tolerances.lse]", "[tolerances.lse2]");
  t.edit(
    "task.toml", "kind = \"definition\"", "kind = \"definition\"\natol = 1");
  auto why = t.error();
  CHECK_THAT(why, Catch::Contains("flops: \"4 * num_indice * dim\": unknown "
                                  "axis 'num_indice' at column 5"));
  CHECK_THAT(why, Catch::Contains("tolerances.lse2: not an output"));
  CHECK_THAT(why, Catch::Contains("atol"));
}

TEST_CASE("an output's tolerance may set a matched ratio with a maximum "
          "error") {
  scratch_task t;
  t.edit("task.toml", "[tolerances.lse]",
    "[tolerances.out]\nmatched_ratio = 0.995\nmax_error = 0.125\n\n"
    "[tolerances.lse]");
  auto task = t.load();
  REQUIRE(task);
  const auto& out = task->workloads[0].outputs[0];
  CHECK(out.name == "out");
  CHECK(out.atol == 1e-2); // bfloat16 default, kept
  CHECK(out.matched_ratio == 0.995);
  CHECK(out.max_error == 0.125);
  // The first output's tolerance is the task's.
  CHECK(task->matched_ratio == 0.995);
  CHECK(task->workloads[0].outputs[1].matched_ratio == 1);
  scratch_task u;
  u.edit(
    "task.toml", "[tolerances.lse]", "[tolerances.lse]\nmatched_ratio = 0.9");
  CHECK_THAT(u.error(),
    Catch::Contains("tolerances.lse.matched_ratio: a matched ratio below 1 "
                    "needs max_error"));
}

TEST_CASE("a definition task without its reference names the missing file") {
  scratch_task t;
  fs::remove(t.folder() / "reference.cpp");
  CHECK_THAT(t.error(), Catch::Contains("reference: cannot read"));
  CHECK_THAT(t.error(), Catch::Contains("reference.cpp"));
}

TEST_CASE("formulas follow arithmetic precedence over axis values") {
  std::map<std::string, int64_t> axes{{"a", 3}, {"b_2", 4}};
  CHECK(*eat::evaluate_formula("1 + a * b_2", axes) == 13);
  CHECK(*eat::evaluate_formula("(1 + a) * b_2 / 2", axes) == 8);
  CHECK(*eat::evaluate_formula("-a + 2.5e1", axes) == 22);
  auto render = [&](const char* text) {
    auto x = eat::evaluate_formula(text, axes);
    REQUIRE_FALSE(x);
    return eat::render(x.error());
  };
  CHECK_THAT(render("a + c"), Catch::Contains("unknown axis 'c' at column 5"));
  CHECK_THAT(render("a * (b_2"), Catch::Contains("expected ')'"));
  CHECK_THAT(render("a / 0"), Catch::Contains("not finite"));
  CHECK_THAT(render("a $ 2"), Catch::Contains("unexpected '$'"));
}

TEST_CASE("a formula nested deeper than 64 levels or longer than 1000 "
          "characters is an error, not a stack overflow") {
  std::map<std::string, int64_t> axes{{"a", 3}};
  auto render = [&](const std::string& text) {
    auto x = eat::evaluate_formula(text, axes);
    REQUIRE_FALSE(x);
    return eat::render(x.error());
  };
  auto parens = [](size_t levels) {
    return std::string(levels, '(') + "a" + std::string(levels, ')');
  };
  CHECK(*eat::evaluate_formula(parens(64), axes) == 3);
  CHECK(*eat::evaluate_formula(std::string(64, '-') + "a", axes) == 3);
  CHECK_THAT(render(parens(65)),
    Catch::Contains("nested more than 64 levels deep at column 65"));
  CHECK_THAT(render("-" + parens(64)),
    Catch::Contains("nested more than 64 levels deep"));
  std::string wide = "a";
  for (int i = 0; i < 100; ++i)
    wide += " + (-1)";
  CHECK(*eat::evaluate_formula(wide, axes) == -97);
  // Texts that overflowed the stack before there was a limit.
  CHECK_THAT(render(parens(100000)), Catch::Contains("longer than 1000"));
  CHECK_THAT(render(std::string(900, '-') + "1"),
    Catch::Contains("nested more than 64 levels deep"));
}

TEST_CASE("a definition task's traces take its definition.json's name, "
          "never a trace_definition") {
  scratch_task t;
  t.edit("task.toml", "kind = \"definition\"",
    "kind = \"definition\"\ntrace_definition = \"other\"");
  CHECK_THAT(t.error(),
    Catch::Contains("trace_definition: only for a task of a builtin kind: a "
                    "definition task's Solutions and Traces carry the name "
                    "in its definition.json"));
}
