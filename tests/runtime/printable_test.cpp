// Specification of terminal-safe text (runtime/printable.hpp): what agents,
// kernels and devices wrote reaches a terminal only as text it shows.

#include <catch2/catch.hpp>

#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/printable.hpp"

using namespace eat;

TEST_CASE("printable text shows control characters and bytes that are not "
          "UTF-8 as escapes, keeps UTF-8, and keeps lines only when asked") {
  std::string text = "a\x1b]0;title\x07 \xc2\xb5s \xc2\x9b \xff\tb\r\nc";
  CHECK(printable(text)
        == "a\\x1b]0;title\\x07 \xc2\xb5s \\xc2\\x9b \\xff\\x09b\\x0d\\x0ac");
  CHECK(printable(text, true)
        == "a\\x1b]0;title\\x07 \xc2\xb5s \\xc2\\x9b \\xff\tb\\x0d\nc");
}

TEST_CASE("a printable buffer passes lines on as printable text, and a "
          "partial line when flushed") {
  std::ostringstream console;
  {
    printable_buffer buffer{console.rdbuf()};
    std::ostream out{&buffer};
    out << "[1/1] t1-c0001 compile_error: \x1b[2J";
    CHECK(console.str().empty()); // not a whole line yet
    out << "\x1b[31mFAKE passed 99.0x\n" << std::flush;
    CHECK(console.str()
          == "[1/1] t1-c0001 compile_error: \\x1b[2J\\x1b[31mFAKE passed "
             "99.0x\n");
    out << "partial \x07" << std::flush;
    CHECK(console.str().ends_with("99.0x\npartial \\x07"));
    out << "rest";
  }
  CHECK(console.str().ends_with("partial \\x07rest")); // the end flushes it
  CHECK(console.str().find('\x1b') == std::string::npos);
}

TEST_CASE("a printable buffer keeps the lines that threads write whole") {
  std::ostringstream console;
  {
    printable_buffer buffer{console.rdbuf()};
    std::vector<std::thread> writers;
    for (char c : {'a', 'b', 'c', 'd'})
      writers.emplace_back([&buffer, c] {
        std::ostream out{&buffer}; // a stream of its own, one buffer
        for (int i = 0; i < 200; ++i)
          out << std::string(40, c) + "\n";
      });
    for (auto& w : writers)
      w.join();
  }
  std::istringstream lines{console.str()};
  size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    INFO(line);
    REQUIRE(line.size() == 40);
    CHECK(line == std::string(40, line[0]));
  }
  CHECK(count == 800);
}
