// Specification of the cli agent's process control (cli_process.hpp): argv
// without a shell, stdin, the environment allow-list, bounded output, the
// idle and wall-clock timeouts, and SIGTERM then SIGKILL to the group.

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>

#include "actors/agent/cli_process.hpp"
#include "actors/protocol/error.hpp"
#include "tests/actors/agent/cli_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

using namespace eat;

namespace {

using eat::test::fake_cli;

cli_run_spec spec_for(std::vector<std::string> argv,
                      const std::filesystem::path& cwd) {
  cli_run_spec spec;
  spec.argv = std::move(argv);
  spec.cwd = cwd;
  spec.env = allowed_environment({"PATH"});
  spec.timeout_s = 60;
  spec.idle_timeout_s = 60;
  spec.kill_grace_s = 5;
  return spec;
}

} // namespace

TEST_CASE("cli process: find_program searches PATH and reports what is missing") {
  auto sh = find_program("sh", "/nonexistent:/bin:/usr/bin");
  REQUIRE(sh);
  CHECK(sh->filename() == "sh");
  auto missing = find_program("eat-no-such-program", "/bin:/usr/bin");
  REQUIRE_FALSE(missing);
  CHECK_THAT(render(missing.error()),
             Catch::Contains("program 'eat-no-such-program' not found in PATH"));
  CHECK_FALSE(find_program("/nonexistent/prog", ""));
}

TEST_CASE("cli process: the child gets stdin, cwd and only allowed variables") {
  test::temp_dir dir;
  setenv("EAT_TEST_VISIBLE", "yes", 1);
  setenv("EAT_TEST_SECRET", "hidden", 1);
  auto spec = spec_for({"/bin/sh", "-c",
                        "cat > got.txt; pwd; env | sort | grep EAT_TEST_"},
                       dir.path());
  spec.env = allowed_environment({"PATH", "EAT_TEST_VISIBLE", "EAT_UNSET_X"});
  spec.stdin_data = "the prompt\n";
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::exited);
  CHECK(r->status.exited);
  CHECK(r->status.code == 0);
  CHECK_THAT(r->output, Catch::Contains("EAT_TEST_VISIBLE=yes"));
  CHECK_THAT(r->output, !Catch::Contains("EAT_TEST_SECRET"));
  CHECK_THAT(r->output, Catch::Contains(dir.path().filename().string()));
  std::ifstream got{dir.path() / "got.txt"};
  std::string line;
  std::getline(got, line);
  CHECK(line == "the prompt");
}

TEST_CASE("cli process: arguments are never interpreted by a shell") {
  test::temp_dir dir;
  auto r = run_cli_process(
    spec_for({"/bin/echo", "$(touch pwned)", "a;b", "{x}"}, dir.path()));
  REQUIRE(r);
  CHECK(r->output == "$(touch pwned) a;b {x}\n");
  CHECK_FALSE(std::filesystem::exists(dir.path() / "pwned"));
}

TEST_CASE("cli process: output keeps the last max_output bytes") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("noisy.sh"), "bulk", "3000000"}, dir.path());
  spec.max_output = 1 << 20;
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->output.size() == size_t{1} << 20);
  CHECK(r->dropped == 3000000 - (size_t{1} << 20));
  CHECK(r->output.find_first_not_of('a') == std::string::npos);
}

TEST_CASE("cli process: a silent child is stopped by the idle timeout") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("hang.sh")}, dir.path());
  spec.idle_timeout_s = 0.2;
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::idle);
  CHECK_FALSE(r->killed);
  CHECK_FALSE(r->status.exited);
  CHECK(r->status.signal == SIGTERM);
  CHECK(describe_end(*r, spec) == "idle: no output for 0.2 s");
}

TEST_CASE("cli process: a child that ignores SIGTERM gets SIGKILL after the grace period") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("hang.sh"), "stubborn"}, dir.path());
  spec.idle_timeout_s = 0.2;
  spec.kill_grace_s = 0.2;
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::idle);
  CHECK(r->killed);
  CHECK(r->status.signal == SIGKILL);
}

TEST_CASE("cli process: a chatty child is stopped by the wall-clock timeout") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("noisy.sh"), "ticks"}, dir.path());
  spec.timeout_s = 0.5;
  spec.idle_timeout_s = 30;
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::timed_out);
  CHECK_THAT(r->output, Catch::StartsWith("tick\n"));
  CHECK(describe_end(*r, spec) == "timed out after 0.5 s");
}

TEST_CASE("cli process: the line callback sees each line and can stop the child") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("noisy.sh"), "ticks"}, dir.path());
  int lines = 0;
  spec.on_line = [&](std::string_view line) {
    CHECK(line == "tick");
    return ++lines < 3;
  };
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::stopped);
  CHECK(lines == 3);
}

TEST_CASE("cli process: crashes are reported with their status or signal") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("crash.sh"), "exit3"}, dir.path());
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(describe_end(*r, spec) == "exited with status 3");
  CHECK_THAT(r->errors, Catch::Contains("something broke"));
  spec.argv = {fake_cli("crash.sh"), "segv"};
  r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(describe_end(*r, spec) == "killed by SIGSEGV");
}

TEST_CASE("cli process: a child is stopped once the run halts") {
  // Ctrl-C and max_wall_s waited for a running agent up to its timeout.
  test::temp_dir dir;
  std::atomic<bool> halt{false};
  auto spec
    = spec_for({"/bin/sh", "-c", "echo started; exec sleep 600"}, dir.path());
  spec.timeout_s = 600;
  spec.idle_timeout_s = 600;
  spec.halt = &halt;
  spec.on_line = [&](std::string_view) {
    halt = true; // as the supervisor does when the run stops
    return true;
  };
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::halted);
  CHECK(r->seconds < 60);
  CHECK(describe_end(*r, spec) == "stopped: the run is ending");
}

TEST_CASE("cli process: a program that cannot start is an error") {
  test::temp_dir dir;
  auto r = run_cli_process(spec_for({"/nonexistent/cli"}, dir.path()));
  REQUIRE_FALSE(r);
  CHECK_THAT(render(r.error()), Catch::Contains("/nonexistent/cli"));
}
