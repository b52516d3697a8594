// Compiles kernel sources into shared objects with the system C++ compiler,
// run as a child process with a deadline (devices/subprocess.hpp). Finished
// objects are cached under `<work_dir>/cache/<key>.so` (compiler output in
// `<key>.log`), where the key is the
// SHA-256 of compiler identity, flags and source, so the task's baseline and
// reference compile once per work_dir. Writes are atomic: each compile works
// in its own temporary directory and renames its result into place. An
// object may be 64 MiB, and the cache 4 GiB, beyond which the objects used
// least recently (an hour ago or more) go (devices/compile_cache.hpp).
//
// A compiler is a plain value owned by the CPU device; compile() may run on
// several threads at once (devices sharing a work_dir never clash).

#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "devices/compile_cache.hpp"

namespace eat::devices {

/// What one compile produced.
struct compile_result {
  /// True if a shared object is ready at `so_path`.
  bool ok = false;
  std::string so_path;
  /// Compiler output (warnings, errors); on a cache hit, the output of the
  /// compile that filled the cache.
  std::string log;
  /// Why it failed, e.g. "exited with status 1: candidate.cpp:3:10: error:
  /// 'x' was not declared in this scope" (with the log's first error line)
  /// or "timed out after 120 s".
  std::string failure;
  /// True if the object came from the cache.
  bool cached = false;
  double seconds = 0;
};

/// Compiles sources into cached shared objects.
class compiler {
public:
  /// Probes `program --version`; fails with error::device_unavailable if the
  /// compiler does not run, error::io_failure if `cache_dir` is unusable.
  /// Each compile may use `memory_bytes` of data memory (RLIMIT_DATA: a
  /// source that includes /dev/zero makes cc1plus grow until the machine
  /// has none) and write files of up to compile_file_bytes, no core dump,
  /// set through util-linux's `prlimit` where it is found.
  static caf::expected<compiler> make(std::string program,
    std::string cache_dir, double timeout_s,
    uint64_t memory_bytes = compile_memory_bytes);

  /// The default data memory of a compile: 8 GiB.
  static constexpr uint64_t compile_memory_bytes = uint64_t{8} << 30;

  /// The largest file a compile may write: 256 MiB (an object may keep 64:
  /// compile_cache.hpp).
  static constexpr uint64_t compile_file_bytes = uint64_t{256} << 20;

  /// Whether compiles are confined by Landlock (devices/landlock.hpp) to
  /// the toolchain's files and their build directory: a source's
  /// `#include "/etc/shadow"` then fails with "Permission denied" instead
  /// of quoting the file in the log. Where the kernel has no Landlock,
  /// compiles read what eat's user can.
  bool confined() const {
    return !reads_.empty();
  }

  /// Lets confined compiles read the installation of `program` too: the
  /// one a driver script (the GPU toolchains', devices/gpu_toolchain.hpp)
  /// runs.
  void add_installation(const std::string& program);

  /// First line of `program --version`, e.g. "g++ (Debian 12.2.0-14) 12.2.0".
  const std::string& identity() const {
    return identity_;
  }

  /// Compiles `source` with `flags` plus "-shared -fPIC". The source is saved
  /// as `file_name` (e.g. "candidate.cpp") so the log names it. A rejected
  /// source is a result with ok == false; errors are reserved for the
  /// machinery (cannot write files, cannot start the compiler, a compiler
  /// that says the disk is full: "the compile ran out of disk space:
  /// ...No space left on device").
  caf::expected<compile_result> compile(const std::string& source,
    const std::vector<std::string>& flags, const std::string& file_name) const;

  /// Facts of the target that `flags` select, read from the compiler's
  /// predefined macros (`-dM -E`), as template constraints name them
  /// (actors/agent/constraints.hpp): "simd_floats" and "vector_registers",
  /// 16 and 32 where __AVX512F__ is defined, 8 and 16 with __AVX2__ and
  /// __FMA__, else 4 and 16 (SSE), as the templates choose their vectors.
  /// Empty when the compiler cannot say (then no constraint uses them).
  std::map<std::string, int64_t> target_facts(
    const std::vector<std::string>& flags) const;

  /// The bounds of compiled objects and of the cache (compile_cache.hpp):
  /// an object over `object_bytes` is the source's compile error, and
  /// each new object trims the cache to `cache_bytes`.
  void set_cache_limits(const cache_limits& limits) {
    limits_ = limits;
  }

  /// Returns the cache key of (source, flags) for this compiler.
  std::string cache_key(
    const std::string& source, const std::vector<std::string>& flags) const;

private:
  compiler(std::string program, std::string identity, std::string cache_dir,
    double timeout_s, bool limited, uint64_t memory_bytes);

  std::string program_;
  std::string identity_;
  std::string cache_dir_;
  double timeout_s_;
  /// Whether compiles run under `prlimit` (found), with this much data.
  bool limited_;
  uint64_t memory_bytes_;
  /// Where compiles are confined, the paths they may read (the system's,
  /// the compiler's installation, EAT_COMPILE_PATHS); empty where not.
  std::vector<std::string> reads_;
  cache_limits limits_;
};

/// The first line of a compiler's output that reports an error (one holding
/// "error:" as a word, as g++, clang and nvcc write it, or the linker's
/// "undefined reference"), cut to 300 characters; "" if there is none.
std::string first_error_line(const std::string& log);

/// One line for `eat devices`: what compiles (and kernels in processes of
/// their own) may read on this machine, and why when they are not
/// confined: "compiles read every file eat's user can: this kernel has no
/// Landlock".
std::string compile_confinement();

/// Returns `flags` followed by "-shared -fPIC": what compile() passes.
std::vector<std::string> shared_object_flags(std::vector<std::string> flags);

} // namespace eat::devices
