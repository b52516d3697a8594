// Helpers shared by the devices tests: the sgemm task from kernels/sgemm/,
// the tiled template rendered with chosen parameters, fast device options and
// a temporary work directory under the system temp dir.

#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/task.hpp"
#include "devices/device.hpp"
#include "devices/options.hpp"
#include "devices/scratch_dir.hpp"

namespace eat::devices::test {

/// Returns the text of the file at `path`; throws if it cannot be read.
std::string read_text(const std::filesystem::path& path);

/// Returns the text of `relative` (a path in the repository).
std::string read_source(const std::string& relative);

/// Returns the workload "m<m>_n<n>_k<k>".
workload gemm_workload(int64_t m, int64_t n, int64_t k);

/// The sgemm task with kernels/sgemm's reference and baseline, tolerances
/// 1e-4, and the given (small) workloads; by default one odd-sized and one
/// square workload.
task_spec sgemm_task(std::vector<workload> workloads = {});

/// The template `relative` (a path in the repository) with each
/// placeholder {{name}} of `params` replaced by its value.
std::string render_template(const std::string& relative,
  const std::vector<std::pair<std::string, std::string>>& params);

/// kernels/sgemm/tiled.cpp.in with its placeholders replaced.
std::string tiled_source(
  const std::string& order, int tile_m, int tile_n, int tile_k);

/// Whether `text` contains `part`.
bool contains(const std::string& text, const std::string& part);

/// A candidate for the sgemm task.
candidate make_candidate(std::string id, std::string source);

/// A fresh temporary directory under the system temp dir.
scratch_dir make_temp_dir();

/// Makes `name` in `dir` a file that kernel code may write: run by root,
/// the runner runs kernels as an unprivileged user ([devices.cpu] run_as,
/// devices/runner/drop_root.hpp), so `dir` becomes traversable and the
/// file writable by anyone.
std::filesystem::path kernel_writable_file(
  const scratch_dir& dir, const std::string& name);

/// Runs `body` in a forked child (a stand-in that may switch users or
/// namespaces for good) and returns the string it returned, which comes
/// back over a pipe; empty, by these tests' convention, when all went as
/// specified. With `reply_fd`, the child's end of the pipe is that
/// descriptor (the runner's sandbox closes every one above its reply's).
std::string in_child(
  const std::function<std::string()>& body, int reply_fd = -1);

/// The first user id from `from` on that no account has, so that no other
/// process shares its task count. Tests that may run at once start from
/// different ids.
uid_t unused_uid(uid_t from);

/// When root, becomes `uid` (group `uid` too, no supplementary groups) as
/// a runner started by that user would be, dumpable as a program started
/// by it is; otherwise stays. Returns whether it worked. For stand-ins in
/// in_child.
bool become_user(uid_t uid);

/// Whether `uid` may make a user namespace here and map its ids in it,
/// asked of the kernel in a child.
bool user_namespaces_allowed(uid_t uid);

/// Spins on the calling thread until it has used `ns` of its own CPU time.
void spin_for_cpu(int64_t ns);

/// Forks up to `most` children that sleep until killed (or until SIGALRM
/// after 60 s, so that a cap that fails leaks no process for ever), and
/// returns those forked before the first fork that failed.
std::vector<pid_t> fork_sleepers(int most);

/// Kills and reaps the children fork_sleepers returned.
void end_sleepers(const std::vector<pid_t>& children);

/// Options for quick tests: the built eat-runner, 3 samples, 10 ms.
cpu_options fast_options(const scratch_dir& work_dir);

/// A CPU device on `opts`; fails the test if it cannot be made.
std::unique_ptr<device> make_device(const cpu_options& opts);

/// Evaluates `source` in kernel processes (seed 11) on sgemm workload `w`,
/// timing at least `min_rounds` rounds (up to 30 s).
eval_result evaluate_rounds(
  const std::string& source, const workload& w, uint32_t min_rounds);

/// A kernel that is correct: the naive loop with the given body inserted
/// before the loop ("prologue") and after it ("epilogue"), with `a`, `b`,
/// `c`, `m`, `n`, `k` in scope.
std::string naive_kernel(const std::string& prologue,
  const std::string& epilogue = "", const std::string& includes = "");

/// True if no process `pid` lives (/proc has none, or a zombie).
bool process_gone(int pid);

} // namespace eat::devices::test
