// What the configuration tests share: the name test texts are parsed
// under, a valid [run] section, and the rendering of a rejected text.

#pragma once

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "runtime/config.hpp"

namespace eat::test {

/// The name under which test texts are parsed: a file next to the fixture
/// configurations, so that tasks_dir "../tasks" holds the tiny_gemm task.
inline const std::filesystem::path test_file
  = std::filesystem::path{EAT_SOURCE_DIR}
    / "tests/runtime/fixtures/configs/test.toml";

/// A valid [run] section of three lines.
inline const std::string run_ok
  = "[run]\ntask = \"tiny_gemm\"\ntasks_dir = \"../tasks\"\n";

/// The rendered error of `text`, which must be rejected as invalid_config.
inline std::string failure(const std::string& text) {
  auto cfg = eat::parse_config(text, test_file);
  REQUIRE_FALSE(cfg);
  CHECK(eat::code_of(cfg.error()) == eat::error::invalid_config);
  return eat::render(cfg.error());
}

/// The rendered error of a single problem at line:column of test_file.
inline std::string message(int line, int column, const std::string& what) {
  return "invalid_config: " + test_file.string() + ":" + std::to_string(line)
         + ":" + std::to_string(column) + ": " + what;
}

} // namespace eat::test
