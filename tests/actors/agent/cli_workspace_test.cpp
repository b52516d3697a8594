// Specification of cli-agent workspaces (workspace.hpp): the files an agent
// finds, snapshots and their differences, what an agent may change, and the
// prompt and notes rendering.

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "actors/agent/workspace.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_files.hpp"

using namespace eat;
namespace fs = std::filesystem;

namespace {

using eat::test::read_text;

workspace_spec sample_spec() {
  workspace_spec s;
  s.task_md = "task";
  s.rules_md = "rules";
  s.kernel = "int k();\n";
  s.learnings_md = "learnt";
  s.notes_md = "notes";
  s.eval_script = make_eval_script("/opt/eat's/eat");
  return s;
}

} // namespace

TEST_CASE("cli workspace: materialising writes the harness files") {
  test::temp_dir tmp;
  auto dir = make_fresh_dir(tmp.path() / "t-a-1");
  REQUIRE(dir);
  REQUIRE(materialise_workspace(*dir, sample_spec()));
  CHECK(read_text(*dir / "TASK.md") == "task");
  CHECK(read_text(*dir / "AGENTS.md") == "rules");
  CHECK(read_text(*dir / "CLAUDE.md") == "rules");
  CHECK(read_text(*dir / "kernel.cpp") == "int k();\n");
  CHECK(read_text(*dir / "LEARNINGS.md") == "learnt");
  CHECK(read_text(*dir / "NOTES.md") == "notes");
  CHECK((fs::status(*dir / "eval").permissions() & fs::perms::owner_exec)
        != fs::perms::none);
  CHECK(fs::is_directory(*dir / "scratch"));
  CHECK(fs::is_directory(*dir / ".eat"));
  CHECK_THAT(read_text(*dir / "eval"),
    Catch::Contains("'/opt/eat'\\''s/eat' agent-eval .eat/eval.sock "
                    "kernel.cpp"));
}

TEST_CASE("cli workspace: a taken name gets a numbered sibling") {
  test::temp_dir tmp;
  auto first = make_fresh_dir(tmp.path() / "w");
  auto second = make_fresh_dir(tmp.path() / "w");
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->filename() == "w");
  CHECK(second->filename() == "w.2");
}

TEST_CASE("cli workspace: snapshots show added, changed and removed files") {
  test::temp_dir tmp;
  REQUIRE(materialise_workspace(tmp.path(), sample_spec()));
  auto before = snapshot_workspace(tmp.path());
  REQUIRE(before);
  CHECK(before->count("kernel.cpp") == 1);
  std::ofstream{tmp.path() / "kernel.cpp"} << "int faster();\n";
  std::ofstream{tmp.path() / "scratch" / "a.txt"} << "x";
  fs::remove(tmp.path() / "LEARNINGS.md");
  fs::create_symlink("/etc/passwd", tmp.path() / "link");
  auto after = snapshot_workspace(tmp.path());
  REQUIRE(after);
  auto diff = diff_snapshots(*before, *after);
  REQUIRE(diff.size() == 4);
  CHECK((diff[0].path == "LEARNINGS.md" && diff[0].what == "removed"));
  CHECK((diff[1].path == "kernel.cpp" && diff[1].what == "changed"));
  CHECK((diff[2].path == "link" && diff[2].what == "added"));
  CHECK((diff[3].path == "scratch/a.txt" && diff[3].what == "added"));
  CHECK(diff_snapshots(*after, *after).empty());
}

TEST_CASE("cli workspace: a snapshot hashes up to its budget, then goes by "
          "size and time") {
  // 10,000 sparse files of 256 MiB, which take no disk, kept eat hashing
  // for hours after an attempt (red team).
  test::temp_dir tmp;
  REQUIRE(materialise_workspace(tmp.path(), sample_spec()));
  for (int i = 0; i < 5; ++i)
    std::ofstream{tmp.path() / "scratch" / std::to_string(i)}
      << std::string(300 << 10, 'x');
  auto snap = snapshot_workspace(tmp.path(), 1 << 20);
  REQUIRE(snap);
  int by_size = 0;
  for (int i = 0; i < 5; ++i)
    by_size += snap->at("scratch/" + std::to_string(i)).rfind("large:", 0) == 0;
  CHECK(by_size >= 2);                        // at most three fit in 1 MiB
  CHECK(snap->at("kernel.cpp").size() == 64); // small ones still fit
}

TEST_CASE("cli workspace: only kernel.cpp, scratch/ and allowed paths may change") {
  std::vector<std::string> allowed{".aider*", ".claude/", "exact.txt"};
  CHECK(change_allowed("kernel.cpp", {}));
  CHECK(change_allowed("scratch/x/y.cpp", {}));
  CHECK(change_allowed(".aider.chat.history.md", allowed));
  CHECK(change_allowed(".claude/settings.local.json", allowed));
  CHECK(change_allowed("exact.txt", allowed));
  CHECK_FALSE(change_allowed("exact.txt.bak", allowed));
  CHECK_FALSE(change_allowed("eval", allowed));
  CHECK_FALSE(change_allowed("TASK.md", allowed));
  CHECK_FALSE(change_allowed("scratch", allowed));
  CHECK_FALSE(change_allowed(".claude", allowed));
}

TEST_CASE("cli workspace: prompts are rendered from the assignment") {
  assignment a;
  a.team = "t1";
  a.agent = "a1";
  a.role = "implementer";
  a.strategy = "explore";
  a.task.name = "sgemm";
  a.task.kind = "gemm";
  a.task.dtype = "float32";
  a.task.atol = 1e-4;
  a.task.rtol = 1e-3;
  a.task.workloads = {{"m64", {{"m", 64}, {"n", 32}}}};
  a.parent.id = "c000007";
  a.parent.family = "custom";
  a.parent.status = eval_status::passed;
  a.parent.speedup = 3.14159;
  a.token_budget = 5000;
  auto text = render_prompt("{{task}} {{kind}} {{backend}} {{dtype}} "
                            "[{{tolerance}}] {{strategy}} {{parent}} "
                            "{{parent_speedup}} {{token_budget}} {{unknown}}\n"
                            "{{workloads}}",
                            a);
  CHECK(text
        == "sgemm gemm cpu float32 [atol 0.0001, rtol 0.001] explore "
           "c000007 (custom, passed) 3.14x 5000 {{unknown}}\n"
           "- `m64`: m=64 n=32\n");
  a.task.matched_ratio = 0.999;
  a.task.max_error = 0.25;
  CHECK(render_prompt("[{{tolerance}}]", a)
        == "[atol 0.0001, rtol 0.001 on at least 99.9 % of the elements, "
           "every element within 0.25 of the reference]");
}

TEST_CASE("cli workspace: notes list the team's history as a table") {
  assignment a;
  a.team = "t1";
  CHECK_THAT(render_notes(a), Catch::Contains("No candidate"));
  a.history.push_back({"c1", "tiled", {{"tile", "32"}}, eval_status::passed, 2.5});
  a.history.push_back({"c2", "custom", {}, eval_status::incorrect, 0});
  auto notes = render_notes(a);
  CHECK_THAT(notes, Catch::Contains("| c1 | tiled | tile=32 | passed | 2.500x |"));
  CHECK_THAT(notes, Catch::Contains("| c2 | custom |  | incorrect | - |"));
}

TEST_CASE("cli workspace: without an eat program eval says it is unavailable") {
  CHECK_THAT(make_eval_script(""), Catch::Contains("evaluation unavailable"));
}
