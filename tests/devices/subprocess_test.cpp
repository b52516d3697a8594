// Child processes: argv without a shell, captured output, exit statuses,
// deadlines that kill the whole process group.

#include <csignal>
#include <cstdlib>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "devices/subprocess.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat::devices;

TEST_CASE("run_captured collects stdout and stderr and the exit status") {
  auto run
    = run_captured({"sh", "-c", "echo out; echo err >&2; exit 3"}, "", 30);
  REQUIRE(run);
  CHECK_FALSE(run->timed_out);
  CHECK(run->status.exited);
  CHECK(run->status.code == 3);
  CHECK(run->output.find("out\n") != std::string::npos);
  CHECK(run->output.find("err\n") != std::string::npos);
}

TEST_CASE("arguments are passed as they are, without a shell") {
  auto run = run_captured({"printf", "%s|", "a b", "$HOME", "*"}, "", 30);
  REQUIRE(run);
  CHECK(run->output == "a b|$HOME|*|");
}

TEST_CASE("run_captured runs in the given directory") {
  auto dir = eat::devices::test::make_temp_dir();
  auto run = run_captured({"pwd", "-P"}, dir.path().string(), 30);
  REQUIRE(run);
  auto real = std::filesystem::canonical(dir.path()).string();
  CHECK(run->output == real + "\n");
}

TEST_CASE("a child inherits the environment, with the spec's variables set "
          "over it") {
  ::setenv("EAT_TEST_KEPT", "parent", 1);
  ::setenv("EAT_TEST_SET", "parent", 1);
  ::setenv("EAT_TEST_SETTING", "parent", 1); // a longer name, not replaced
  process_spec spec;
  spec.argv = {"sh", "-c",
    "printf '%s|%s|%s|%s' \"$EAT_TEST_KEPT\" \"$EAT_TEST_SET\" "
    "\"$EAT_TEST_SETTING\" \"$EAT_TEST_NEW\""};
  spec.env = {"EAT_TEST_SET=child", "EAT_TEST_NEW=new"};
  auto run = run_captured(spec, 30);
  REQUIRE(run);
  CHECK(run->output == "parent|child|parent|new");
  // The parent's own environment is unchanged.
  CHECK(std::string{::getenv("EAT_TEST_SET")} == "parent");
  CHECK(::getenv("EAT_TEST_NEW") == nullptr);
}

TEST_CASE("a bare name in the spec's environment removes that variable "
          "from the child's") {
  ::setenv("EAT_TEST_GONE", "parent", 1);
  ::setenv("EAT_TEST_GONE_NOT", "parent", 1); // a longer name, kept
  process_spec spec;
  spec.argv = {"sh", "-c",
    "printf '%s|%s|%s' \"${EAT_TEST_GONE-unset}\" \"$EAT_TEST_GONE_NOT\" "
    "\"${EAT_TEST_NEVER-unset}\""};
  spec.env = {"EAT_TEST_GONE", "EAT_TEST_NEVER"};
  auto run = run_captured(spec, 30);
  REQUIRE(run);
  CHECK(run->output == "unset|parent|unset");
  CHECK(std::string{::getenv("EAT_TEST_GONE")} == "parent");
}

TEST_CASE("a child gets none of the parent's secrets, and only the variables "
          "a compiler or a runner needs, unless the spec keeps them all") {
  ::setenv("EAT_TEST_API_KEY", "sk-parent", 1);
  ::setenv("EAT_TEST_Token", "t-parent", 1);
  ::setenv("EAT_TEST_PLAIN", "plain", 1);
  // What a red-team kernel printed into its result: no word that looks
  // secret names them.
  ::setenv("DATABASE_URL", "postgres://admin:hunter2@db/prod", 1);
  ::setenv("GH_PAT", "ghp_x", 1);
  ::setenv("CUDA_CACHE_PATH", "/tmp/cc", 1);
  process_spec spec;
  spec.argv = {"sh", "-c",
    "printf '%s|%s|%s|%s|%s|%s|%s' \"${EAT_TEST_API_KEY-unset}\" "
    "\"${EAT_TEST_Token-unset}\" \"$EAT_TEST_PLAIN\" "
    "\"${DATABASE_URL-unset}\" \"${GH_PAT-unset}\" \"$CUDA_CACHE_PATH\" "
    "\"${PATH:+path}\""};
  auto run = run_captured(spec, 30);
  REQUIRE(run);
  CHECK(run->output == "unset|unset|plain|unset|unset|/tmp/cc|path");
  spec.keep_secrets = true;
  run = run_captured(spec, 30);
  REQUIRE(run);
  CHECK(run->output
        == "sk-parent|t-parent|plain|postgres://admin:hunter2@db/prod|ghp_x|"
           "/tmp/cc|path");
  for (const char* name : {"DATABASE_URL", "GH_PAT", "CUDA_CACHE_PATH"})
    ::unsetenv(name);
  CHECK(secret_name("AWS_SECRET_ACCESS_KEY"));
  CHECK(secret_name("OPENAI_API_KEY"));
  CHECK(secret_name("DB_PASSWORD"));
  CHECK_FALSE(secret_name("CUDA_VISIBLE_DEVICES"));
  CHECK_FALSE(secret_name("LD_LIBRARY_PATH"));
  CHECK(inherited_name("PATH"));
  CHECK(inherited_name("LC_NUMERIC"));
  CHECK(inherited_name("HIP_VISIBLE_DEVICES"));
  CHECK_FALSE(inherited_name("PATHS"));
  CHECK_FALSE(inherited_name("MYSQL_PWD"));
  CHECK_FALSE(inherited_name("SENTRY_DSN"));
}

TEST_CASE("a child leads a session of its own, without a controlling "
          "terminal") {
  // Field 6 of /proc/PID/stat is the session, field 7 the terminal.
  auto run
    = run_captured({"sh", "-c",
                     "read -r stat < /proc/self/stat; set -- ${stat#*) }; "
                     "echo \"$$ $4 $5\""},
      "", 30);
  REQUIRE(run);
  std::istringstream fields{run->output};
  long pid = 0, session = 0, terminal = -1;
  fields >> pid >> session >> terminal;
  CHECK(session == pid);
  CHECK(terminal == 0);
}

TEST_CASE("a child past its deadline is killed with its whole group") {
  // The shell starts a grandchild that holds the output pipe open; only a
  // group kill lets run_captured return.
  auto run = run_captured({"sh", "-c", "sleep 60 & wait"}, "", 0.2);
  REQUIRE(run);
  CHECK(run->timed_out);
  CHECK_FALSE(run->status.exited);
  CHECK(run->status.signal == SIGKILL);
  CHECK(run->seconds < 30);
}

TEST_CASE("output beyond the limit is counted, not kept") {
  auto run = run_captured({"sh", "-c", "printf 0123456789"}, "", 30, 4);
  REQUIRE(run);
  CHECK(run->output == "0123");
  CHECK(run->dropped == 6);
}

TEST_CASE("a program that does not exist cannot be started") {
  auto run = run_captured({"eat-no-such-program"}, "", 30);
  CHECK_FALSE(run);
}

TEST_CASE("signals are named") {
  CHECK(signal_name(SIGSEGV) == "SIGSEGV");
  CHECK(signal_name(SIGKILL) == "SIGKILL");
  exit_status x;
  x.signal = SIGBUS;
  CHECK(to_string(x) == "killed by SIGBUS");
  x.exited = true;
  x.code = 2;
  CHECK(to_string(x) == "exited with status 2");
}
