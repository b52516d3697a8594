#include "devices/compiler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

#include <unistd.h>

#include "actors/protocol/error.hpp"
#include "devices/landlock.hpp"
#include "devices/scratch_dir.hpp"
#include "devices/sha256.hpp"
#include "devices/subprocess.hpp"

namespace eat::devices {

namespace fs = std::filesystem;

namespace {

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::string describe_failure(const captured_run& run, double timeout_s) {
  if (run.timed_out) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "timed out after %g s", timeout_s);
    return buf;
  }
  return to_string(run.status);
}

caf::expected<void> write_file(const fs::path& path, const std::string& text) {
  std::ofstream out{path, std::ios::binary};
  out << text;
  out.close();
  if (!out)
    return make_error(error::io_failure, "cannot write " + path.string());
  return {};
}

std::string read_file(const fs::path& path) {
  std::ifstream in{path, std::ios::binary};
  return std::string{std::istreambuf_iterator<char>{in}, {}};
}

/// True if `line` holds "error:" as a word ("a.cpp:3:1: error:", "fatal
/// error:", "a.cu(3): error:"), not as the end of a name ("system_error:39").
bool reports_error(std::string_view line) {
  for (auto at = line.find("error:"); at != std::string_view::npos;
       at = line.find("error:", at + 1))
    if (at == 0 || line[at - 1] == ' ' || line[at - 1] == ':')
      return true;
  return false;
}

/// The first line of `log` for which `pred` holds, cut to 300 characters
/// ("..." marks a cut); "" if there is none.
template<class Predicate>
std::string first_line_where(const std::string& log, Predicate pred) {
  size_t begin = 0;
  while (begin < log.size()) {
    auto end = std::min(log.find('\n', begin), log.size());
    auto line = std::string_view{log}.substr(begin, end - begin);
    if (pred(line)) {
      auto text = std::string{line};
      return text.size() > 300 ? text.substr(0, 300) + "..." : text;
    }
    begin = end + 1;
  }
  return {};
}

/// The line of a compiler's output that says the disk is full, or "".
std::string disk_full_line(const std::string& log) {
  return first_line_where(log, [](std::string_view line) {
    return line.find("No space left on device") != std::string_view::npos
           || line.find("Disk quota exceeded") != std::string_view::npos;
  });
}

/// The real path of `program`, looked up in PATH when it names no
/// directory; empty if it is not found.
fs::path resolve_program(const std::string& program) {
  std::error_code ec;
  if (program.find('/') != std::string::npos)
    return fs::canonical(program, ec);
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    auto end = dirs.find(':');
    auto dir = dirs.substr(0, end);
    dirs = end == std::string_view::npos ? "" : dirs.substr(end + 1);
    auto candidate = fs::path{dir.empty() ? "." : std::string{dir}} / program;
    if (::access(candidate.c_str(), X_OK) == 0)
      return fs::canonical(candidate, ec);
  }
  return {};
}

/// The installation of `program`: the directory above its bin/
/// (/usr/local/cuda-13.0 for its bin/nvcc), or its own directory; "" if it
/// is not found or that is "/".
std::string installation_of(const std::string& program) {
  auto dir = resolve_program(program).parent_path();
  auto prefix = dir.filename() == "bin" ? dir.parent_path() : dir;
  if (prefix.empty() || prefix == prefix.root_path())
    return {};
  return prefix.string();
}

/// What a compile reads: the system's directories, the installation of
/// `program` and the paths listed in EAT_COMPILE_PATHS, separated by ':'.
std::vector<std::string> toolchain_paths(const std::string& program) {
  auto paths = system_read_paths();
  if (auto prefix = installation_of(program); !prefix.empty())
    paths.push_back(std::move(prefix));
  if (const char* extra = std::getenv("EAT_COMPILE_PATHS")) {
    std::string_view rest = extra;
    while (!rest.empty()) {
      auto end = rest.find(':');
      if (auto item = rest.substr(0, end); !item.empty())
        paths.emplace_back(item);
      rest = end == std::string_view::npos ? "" : rest.substr(end + 1);
    }
  }
  return paths;
}

/// The directories that `flags` name for headers and libraries (-I,
/// -isystem, -iquote, -idirafter, -L, joined or separate), which a
/// confined compile may read too: flags come from the configuration and
/// the task, never from an agent.
std::vector<std::string> flag_paths(const std::vector<std::string>& flags) {
  std::vector<std::string> out;
  for (size_t i = 0; i < flags.size(); ++i)
    for (const char* option :
      {"-isystem", "-iquote", "-idirafter", "-I", "-L"}) {
      std::string_view flag = flags[i];
      if (flag.rfind(option, 0) != 0)
        continue;
      auto rest = flag.substr(std::string_view{option}.size());
      if (!rest.empty())
        out.emplace_back(rest);
      else if (i + 1 < flags.size())
        out.push_back(flags[++i]);
      break;
    }
  return out;
}

} // namespace

std::string first_error_line(const std::string& log) {
  return first_line_where(log, [](std::string_view line) {
    return reports_error(line)
           || line.find("undefined reference") != std::string_view::npos;
  });
}

std::vector<std::string> shared_object_flags(std::vector<std::string> flags) {
  flags.emplace_back("-shared");
  flags.emplace_back("-fPIC");
  return flags;
}

caf::expected<compiler> compiler::make(std::string program,
  std::string cache_dir, double timeout_s, uint64_t memory_bytes) {
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec)
    return make_error(
      error::io_failure, "cannot create " + cache_dir + ": " + ec.message());
  auto probe = run_captured({program, "--version"}, "", 30);
  if (!probe)
    return make_error(error::device_unavailable,
      "compiler unavailable: " + render(probe.error()));
  if (probe->timed_out || !probe->status.exited || probe->status.code != 0)
    return make_error(error::device_unavailable,
      program + " --version failed: " + describe_failure(*probe, 30));
  auto identity = first_line(probe->output);
  auto found = run_captured({"prlimit", "--version"}, "", 30);
  bool limited = found && found->status.exited && found->status.code == 0;
  compiler result{std::move(program), std::move(identity), std::move(cache_dir),
    timeout_s, limited, memory_bytes};
  if (landlock_abi() > 0)
    result.reads_ = toolchain_paths(result.program_);
  return result;
}

compiler::compiler(std::string program, std::string identity,
  std::string cache_dir, double timeout_s, bool limited, uint64_t memory_bytes)
  : program_(std::move(program)), identity_(std::move(identity)),
    cache_dir_(std::move(cache_dir)), timeout_s_(timeout_s), limited_(limited),
    memory_bytes_(memory_bytes) {
  // nop
}

void compiler::add_installation(const std::string& program) {
  if (auto prefix = installation_of(program); confined() && !prefix.empty())
    reads_.push_back(std::move(prefix));
}

std::string compile_confinement() {
  if (landlock_abi() == 0)
    return "compiles read every file eat's user can: " + landlock_description();
  return "compiles read only the toolchain and their build directory, "
         "kernels in processes of their own only the system's libraries ("
         + landlock_description() + ")";
}

std::map<std::string, int64_t> compiler::target_facts(
  const std::vector<std::string>& flags) const {
  std::vector<std::string> argv{program_};
  argv.insert(argv.end(), flags.begin(), flags.end());
  for (const char* x : {"-dM", "-E", "-x", "c++", "/dev/null"})
    argv.emplace_back(x);
  auto run = run_captured(argv, "", 30);
  if (!run || run->timed_out || !run->status.exited || run->status.code != 0)
    return {};
  auto defined = [&](const std::string& macro) {
    return run->output.find("#define " + macro + " ") != std::string::npos;
  };
  if (defined("__AVX512F__"))
    return {{"simd_floats", 16}, {"vector_registers", 32}};
  if (defined("__AVX2__") && defined("__FMA__"))
    return {{"simd_floats", 8}, {"vector_registers", 16}};
  return {{"simd_floats", 4}, {"vector_registers", 16}};
}

std::string compiler::cache_key(
  const std::string& source, const std::vector<std::string>& flags) const {
  std::string material = identity_;
  material += '\0';
  for (const auto& flag : shared_object_flags(flags)) {
    material += flag;
    material += '\0';
  }
  material += '\0';
  material += source;
  return sha256_hex(material);
}

caf::expected<compile_result> compiler::compile(const std::string& source,
  const std::vector<std::string>& flags, const std::string& file_name) const {
  auto start = std::chrono::steady_clock::now();
  compile_result result;
  auto target = fs::path{cache_dir_} / (cache_key(source, flags) + ".so");
  result.so_path = target.string();
  auto log_path = fs::path{target}.replace_extension(".log");
  if (fs::exists(target)) {
    mark_used(target);
    result.ok = true;
    result.cached = true;
    result.log = read_file(log_path);
    return result;
  }
  auto dir = scratch_dir::make(cache_dir_, "build.");
  if (!dir)
    return std::move(dir.error());
  if (auto ok = write_file(dir->path() / file_name, source); !ok)
    return std::move(ok.error());
  process_spec spec;
  if (limited_)
    spec.argv = {"prlimit", "--data=" + std::to_string(memory_bytes_),
      "--fsize=" + std::to_string(compile_file_bytes), "--core=0", "--"};
  spec.argv.push_back(program_);
  for (auto& flag : shared_object_flags(flags))
    spec.argv.emplace_back(std::move(flag));
  for (const char* arg : {"-o", "out.so"})
    spec.argv.emplace_back(arg);
  spec.argv.push_back(file_name);
  spec.cwd = dir->path().string();
  // The compiler's temporaries (g++'s, nvcc's, and the directories hipcc
  // leaves behind even when it succeeds) go with the build directory, also
  // when a deadline kills the compile.
  spec.env = {"TMPDIR=" + fs::absolute(dir->path()).string()};
  if (confined()) {
    spec.confine = landlock_rules{
      reads_, {fs::absolute(dir->path()).string(), "/dev/null"}};
    for (auto& path : flag_paths(flags))
      spec.confine->read.push_back(std::move(path));
  }
  auto run = run_captured(spec, timeout_s_);
  if (!run)
    return make_error(error::compile_failed, render(run.error()));
  result.log = std::move(run->output);
  if (run->dropped > 0)
    result.log += "\n[" + std::to_string(run->dropped)
                  + " more bytes of compiler output dropped]\n";
  result.seconds
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
        .count();
  if (run->timed_out || !run->status.exited || run->status.code != 0) {
    // A full disk is the machine's fault, not the source's.
    if (auto line = disk_full_line(result.log); !line.empty())
      return make_error(error::io_failure, "the compile ran out of disk "
                                           "space: "
                                             + line);
    result.failure = describe_failure(*run, timeout_s_);
    if (auto line = first_error_line(result.log);
        !run->timed_out && !line.empty())
      result.failure += ": " + line;
    else if (limited_ && result.log.find("out of memory") != std::string::npos)
      result.failure += ": out of memory (a compile may use "
                        + std::to_string(memory_bytes_ >> 20) + " MiB)";
    return result;
  }
  std::error_code ec;
  if (auto bytes = fs::file_size(dir->path() / "out.so", ec);
      !ec && bytes > limits_.object_bytes) {
    result.failure = "the compiled object has " + std::to_string(bytes >> 20)
                     + " MiB, over the "
                     + std::to_string(limits_.object_bytes >> 20)
                     + " MiB an object may have (a large static array?)";
    return result;
  }
  ec.clear();
  // The log goes first, so that whoever finds the object finds its log.
  if (write_file(dir->path() / "out.log", result.log))
    fs::rename(dir->path() / "out.log", log_path, ec);
  ec.clear();
  fs::rename(dir->path() / "out.so", target, ec);
  if (ec)
    return make_error(error::io_failure, "cannot move the compiled object to "
                                           + target.string() + ": "
                                           + ec.message());
  trim_cache(cache_dir_, limits_); // the new object is too recent to go
  result.ok = true;
  return result;
}

} // namespace eat::devices
