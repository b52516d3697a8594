// A scratch copy of the tiny_gemm task fixture for task-file tests
// (task_file_test.cpp, task_file_sources_test.cpp): edit its task.toml, load
// it, and compare the error with the expected file:line:column message.

#pragma once

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "runtime/task_file.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_files.hpp"

namespace eat::test {

inline const std::filesystem::path fixture_tasks
  = std::filesystem::path{EAT_SOURCE_DIR} / "tests/runtime/fixtures/tasks";
inline const std::filesystem::path fixture_task = fixture_tasks / "tiny_gemm";

/// A temporary tasks directory holding a copy of the tiny_gemm fixture.
class scratch_tasks {
public:
  scratch_tasks() {
    std::filesystem::create_directories(dir());
    std::filesystem::copy(
      fixture_task, folder(), std::filesystem::copy_options::recursive);
  }

  std::filesystem::path dir() const {
    return root_.path() / "tasks";
  }

  std::filesystem::path folder() const {
    return dir() / "tiny_gemm";
  }

  std::filesystem::path task_file() const {
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

} // namespace eat::test
