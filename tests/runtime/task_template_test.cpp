// Specification of template placeholders and rendering
// (actors/agent/render.hpp), and of the repository's sgemm task, which
// renders (docs/tasks.md).

#include "runtime/task_file.hpp"

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"

namespace fs = std::filesystem;

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
