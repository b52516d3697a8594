// A run directory: where one run keeps its store, its build cache and its
// best kernel. Layout (docs/store-layout.md):
//
//   <root>/<name>-<YYYYmmdd-HHMMSS>/
//     config.toml      the configuration the run started with
//     run.lock         held (flock) by the process working on the run
//     store/           the LMDB environment (event log)
//     work/            compiled kernels cache and runner scratch dirs
//     best_kernel.cpp  the best kernel's source, written when a run ends
//
// A run_dir object holds the lock for its lifetime; only one process at a
// time can run or resume a run. Not thread-safe; owned by the command.

#pragma once

#include <filesystem>
#include <string>

#include <caf/expected.hpp>

namespace eat {

class run_dir {
public:
  /// Creates a fresh run directory under `root` named `name-<time>` (or
  /// exactly `dir` when not empty), copies `config_text` into it, and locks it.
  static caf::expected<run_dir> create(const std::filesystem::path& root,
                                       const std::string& name,
                                       const std::string& config_text,
                                       const std::filesystem::path& dir = {});

  /// Opens and locks an existing run directory.
  static caf::expected<run_dir> open(const std::filesystem::path& dir);

  run_dir(run_dir&& other) noexcept;
  run_dir& operator=(run_dir&& other) noexcept;
  run_dir(const run_dir&) = delete;
  run_dir& operator=(const run_dir&) = delete;
  ~run_dir();

  const std::filesystem::path& path() const {
    return path_;
  }
  /// The run id: the directory's name.
  std::string id() const {
    return path_.filename().string();
  }
  std::filesystem::path store_dir() const {
    return path_ / "store";
  }
  std::filesystem::path work_dir() const {
    return path_ / "work";
  }
  std::filesystem::path best_kernel() const {
    return path_ / "best_kernel.cpp";
  }

  /// Removes what a process killed in the middle of its work left in work/
  /// (its own and each GPU backend's folder): evaluations' scratch
  /// directories and unfinished builds. Compiled objects stay. Safe only
  /// because the lock keeps every other process out. Returns how many
  /// directories went.
  size_t remove_leftovers() const;

private:
  run_dir(std::filesystem::path path, int lock_fd);
  static caf::expected<int> lock(const std::filesystem::path& dir);
  /// Makes `dir` readable by its owner alone (best effort).
  static void keep_private(const std::filesystem::path& dir);

  std::filesystem::path path_;
  int lock_fd_ = -1;
};

} // namespace eat
