// The compiler: cached shared objects, failures with their log, deadlines.

#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>

#include "devices/compiler.hpp"
#include "devices/landlock.hpp"
#include "tests/devices/test_support.hpp"
#include "tests/support/text_files.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

const std::vector<std::string> flags{"-O1", "-std=c++17"};

compiler make_compiler(const scratch_dir& dir, double timeout_s = 60) {
  auto c = compiler::make("g++", (dir.path() / "cache").string(), timeout_s);
  REQUIRE(c);
  return std::move(*c);
}

} // namespace

TEST_CASE("the compiler knows its identity") {
  auto dir = make_temp_dir();
  auto c = make_compiler(dir);
  CHECK(c.identity().find("g++") != std::string::npos);
  CHECK(c.identity().find('\n') == std::string::npos);
}

TEST_CASE("a source compiles once and a second compile is a cache hit with "
          "the same log") {
  auto dir = make_temp_dir();
  auto c = make_compiler(dir);
  auto source = std::string{"int eat_unused_warning() { int x; return 0; }\n"};
  auto warn = std::vector<std::string>{"-O1", "-Wall"};
  auto first = c.compile(source, warn, "candidate.cpp");
  REQUIRE(first);
  REQUIRE(first->ok);
  CHECK_FALSE(first->cached);
  CHECK(std::filesystem::exists(first->so_path));
  CHECK(first->log.find("unused variable") != std::string::npos);
  auto second = c.compile(source, warn, "candidate.cpp");
  REQUIRE(second);
  CHECK(second->ok);
  CHECK(second->cached);
  CHECK(second->so_path == first->so_path);
  CHECK(second->log == first->log);
}

TEST_CASE("the cache key depends on source, flags and compiler") {
  auto dir = make_temp_dir();
  auto c = make_compiler(dir);
  auto key = c.cache_key("int x;", flags);
  CHECK(key.size() == 64);
  CHECK(c.cache_key("int x;", flags) == key);
  CHECK(c.cache_key("int y;", flags) != key);
  CHECK(c.cache_key("int x;", {"-O2", "-std=c++17"}) != key);
}

TEST_CASE("a rejected source gives the compiler's output and no object") {
  auto dir = make_temp_dir();
  auto c = make_compiler(dir);
  auto result = c.compile("int f() { return nope; }\n", flags, "candidate.cpp");
  REQUIRE(result);
  CHECK_FALSE(result->ok);
  // The failure names the compiler's first error line.
  CHECK_THAT(
    result->failure, Catch::StartsWith("exited with status 1: candidate.cpp:1:")
                       && Catch::Contains("error") && Catch::Contains("nope"));
  CHECK(result->log.find("candidate.cpp:1") != std::string::npos);
  CHECK(result->log.find("nope") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(result->so_path));
}

TEST_CASE("the first error line of a compiler's output is the one that "
          "names an error") {
  CHECK(first_error_line("") == "");
  CHECK(first_error_line("a.cpp:1:5: warning: unused\n") == "");
  CHECK(first_error_line("In file included from /usr/include/c++/12/"
                         "system_error:39,\n"
                         "a.cpp: In function 'f':\n"
                         "a.cpp:2:3: warning: unused\n"
                         "a.cpp:4:1: error: static assertion failed: invalid "
                         "combination: mr=8\n"
                         "a.cpp:5:1: error: later\n")
        == "a.cpp:4:1: error: static assertion failed: invalid combination: "
           "mr=8");
  // The linker's own line says which symbol; collect2's only that it failed.
  CHECK(first_error_line("/usr/bin/ld: a.o: in function `f':\n"
                         "a.cpp:(.text+0x5): undefined reference to `g'\n"
                         "collect2: error: ld returned 1 exit status\n")
        == "a.cpp:(.text+0x5): undefined reference to `g'");
  CHECK(first_error_line("a.cu(3): error: expected a \";\"\n")
        == "a.cu(3): error: expected a \";\"");
  CHECK(first_error_line("a.cpp:1:10: fatal error: x.h: No such file\n")
        == "a.cpp:1:10: fatal error: x.h: No such file");
  auto long_line = "error: " + std::string(400, 'x');
  CHECK(first_error_line(long_line) == long_line.substr(0, 300) + "...");
}

TEST_CASE("a compile past its deadline is killed and reported") {
  auto dir = make_temp_dir();
  auto c = make_compiler(dir, 0.001);
  auto result = c.compile("int x;\n", flags, "candidate.cpp");
  REQUIRE(result);
  CHECK_FALSE(result->ok);
  CHECK(result->failure == "timed out after 0.001 s");
}

TEST_CASE("a source that makes the compiler take all memory fails at the "
          "compile's limit") {
  // cc1plus reads /dev/zero for ever, doubling its buffer: without a limit
  // it took the machine's memory. Confined compiles may not read
  // /dev/zero at all: EAT_COMPILE_PATHS grants it here, to reach the limit.
  auto dir = make_temp_dir();
  ::setenv("EAT_COMPILE_PATHS", "/nonexistent:/dev/zero", 1);
  auto c = compiler::make(
    "g++", (dir.path() / "cache").string(), 60, uint64_t{512} << 20);
  ::unsetenv("EAT_COMPILE_PATHS");
  REQUIRE(c);
  auto result = c->compile("#include \"/dev/zero\"\n", flags, "candidate.cpp");
  REQUIRE(result);
  INFO(result->log);
  CHECK_FALSE(result->ok);
  CHECK(result->failure
        == "exited with status 1: out of memory (a compile may use 512 MiB)");
}

TEST_CASE("a compile reads only the toolchain and its build directory") {
  // Run as root, a source quoted any file of the machine in its compile
  // log, which goes to the agent: "error: 'the' does not name a type" and
  // the line. Files of eat's run (this test's directory stands for them),
  // other processes' environments, /dev/zero and /dev/urandom (read for
  // ever, up to the compile's memory limit) are out of reach too.
  auto dir = make_temp_dir();
  auto secret = dir.path() / "secret.txt";
  eat::test::write_text(secret, "the machine's secret 4711\n");
  auto c = make_compiler(dir);
  if (landlock_abi() == 0) {
    WARN("not confined here: " << compile_confinement());
    CHECK_FALSE(c.confined());
    CHECK(contains(compile_confinement(), "every file eat's user can"));
    return;
  }
  CHECK(c.confined());
  CHECK(contains(compile_confinement(), "(Landlock ABI "));
  for (auto source : {"#include \"" + secret.string() + "\"\n",
         "asm(\".incbin \\\"" + secret.string() + "\\\"\");\n",
         std::string{"#include \"/proc/1/environ\"\n"},
         std::string{"#include \"/dev/zero\"\n"},
         std::string{"#include \"/dev/urandom\"\n"}}) {
    auto result = c.compile(source, flags, "candidate.cpp");
    REQUIRE(result);
    INFO(source << result->log);
    CHECK_FALSE(result->ok);
    // The assembler says "file not found" for the file it may not open.
    CHECK((contains(result->log, "Permission denied")
           || contains(result->log, "Error: file not found")));
    CHECK_FALSE(contains(result->log, "4711"));
  }
  // What an honest kernel needs still compiles: the standard library.
  auto fine = c.compile("#include <cmath>\n#include <vector>\n"
                        "float eat_f(float x) { return std::sqrt(x); }\n",
    flags, "candidate.cpp");
  REQUIRE(fine);
  INFO(fine->log);
  CHECK(fine->ok);
}

TEST_CASE("a confined compile reads the header and library directories its "
          "flags name") {
  // Flags come from the configuration and the task, not from agents.
  auto dir = make_temp_dir();
  auto include = dir.path() / "include";
  eat::test::write_text(include / "eat_test_header.h", "#define EAT_SEVEN 7\n");
  auto c = make_compiler(dir);
  auto source = std::string{"#include <eat_test_header.h>\n"
                            "int eat_seven() { return EAT_SEVEN; }\n"};
  for (const auto& with :
    std::vector<std::vector<std::string>>{{"-O1", "-I" + include.string()},
      {"-O1", "-isystem", include.string()}}) {
    auto result = c.compile(source, with, "candidate.cpp");
    REQUIRE(result);
    INFO(result->log);
    CHECK(result->ok);
  }
  if (!c.confined())
    return;
  // The same header named by its path, without the flag, is out of reach.
  auto named = c.compile(
    "#include \"" + (include / "eat_test_header.h").string() + "\"\n", flags,
    "candidate.cpp");
  REQUIRE(named);
  CHECK_FALSE(named->ok);
  CHECK(contains(named->log, "Permission denied"));
}

TEST_CASE("no build directories are left behind") {
  auto dir = make_temp_dir();
  auto c = make_compiler(dir);
  REQUIRE(c.compile("int x;\n", flags, "candidate.cpp"));
  REQUIRE(c.compile("int y = ;\n", flags, "candidate.cpp"));
  for (const auto& entry :
    std::filesystem::directory_iterator{dir.path() / "cache"})
    CHECK(
      entry.path().filename().string().rfind("build.", 0) == std::string::npos);
}

TEST_CASE("a compiler's temporary files go with its build directory, also "
          "when its deadline kills it") {
  // A stand-in compiler that makes a temporary directory, as hipcc does
  // (it leaves two behind on every compile), and says where.
  auto dir = make_temp_dir();
  auto script = dir.path() / "fake-cc";
  eat::test::write_text(script,
    "#!/bin/sh\n"
    "[ \"$1\" = --version ] && { echo fake-cc 1.0; exit 0; }\n"
    "echo \"made $(mktemp -d)\"\n"
    "case \"$*\" in *slow*) exec sleep 60;; esac\n"
    "touch out.so\n");
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  auto cache = std::filesystem::absolute(dir.path() / "cache");
  auto made = [](const std::string& log) {
    auto at = log.find("made ");
    REQUIRE(at != std::string::npos);
    return log.substr(at + 5, log.find('\n', at) - at - 5);
  };
  SECTION("a compile that succeeds") {
    auto c = compiler::make(script.string(), cache.string(), 30);
    REQUIRE(c);
    auto result = c->compile("int x;\n", flags, "candidate.cpp");
    REQUIRE(result);
    REQUIRE(result->ok);
    auto tmp = made(result->log);
    CHECK_THAT(tmp, Catch::StartsWith((cache / "build.").string()));
    CHECK_FALSE(std::filesystem::exists(tmp));
  }
  SECTION("a compile killed at its deadline") {
    auto c = compiler::make(script.string(), cache.string(), 3);
    REQUIRE(c);
    auto result = c->compile("int x;\n", {"-slow"}, "candidate.cpp");
    REQUIRE(result);
    CHECK(result->failure == "timed out after 3 s");
    auto tmp = made(result->log);
    CHECK_THAT(tmp, Catch::StartsWith((cache / "build.").string()));
    CHECK_FALSE(std::filesystem::exists(tmp));
  }
}

TEST_CASE("a compiler that does not run is unavailable") {
  auto dir = make_temp_dir();
  auto c = compiler::make("eat-no-such-compiler", dir.path().string(), 5);
  CHECK_FALSE(c);
}

TEST_CASE("the target's vector width and registers follow the flags, as the "
          "templates' own macros do") {
  auto dir = make_temp_dir();
  auto c = make_compiler(dir);
  using facts = std::map<std::string, int64_t>;
  CHECK(c.target_facts({"-march=x86-64", "-mavx512f"})
        == facts{{"simd_floats", 16}, {"vector_registers", 32}});
  CHECK(c.target_facts({"-march=x86-64", "-mavx2", "-mfma"})
        == facts{{"simd_floats", 8}, {"vector_registers", 16}});
  // AVX2 without FMA is not the templates' AVX2 path.
  CHECK(c.target_facts({"-march=x86-64", "-mavx2"})
        == facts{{"simd_floats", 4}, {"vector_registers", 16}});
  CHECK(c.target_facts({"-march=x86-64"})
        == facts{{"simd_floats", 4}, {"vector_registers", 16}});
  // A compiler that rejects the flags cannot say.
  CHECK(c.target_facts({"-mno-such-flag"}).empty());
}
