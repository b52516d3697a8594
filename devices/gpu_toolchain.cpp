#include "devices/gpu_toolchain.hpp"

#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

#include "actors/protocol/error.hpp"
#include "devices/sha256.hpp"
#include "devices/subprocess.hpp"

namespace eat::devices {

namespace fs = std::filesystem;

namespace {

constexpr size_t max_build_log = 16 * 1024;

const std::vector<std::string> reference_flags{"-O2", "-std=c++17"};

std::string truncated(std::string log) {
  if (log.size() <= max_build_log)
    return log;
  auto dropped = log.size() - max_build_log;
  log.resize(max_build_log);
  log += "\n[" + std::to_string(dropped) + " more bytes truncated]\n";
  return log;
}

/// `text` in single quotes for sh.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char ch : text)
    out += ch == '\'' ? std::string{"'\\''"} : std::string{ch};
  return out + "'";
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' '))
    s.pop_back();
  return s;
}

/// Writes the driver script for `program` and returns its path.
caf::expected<std::string> write_script(const std::string& backend,
  const std::string& program, const std::string& identity,
  const std::string& work_dir) {
  auto dir = fs::path{work_dir} / "toolchain";
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto text = toolchain_script(backend, program, identity);
  auto path = dir / (backend + "-" + sha256_hex(text).substr(0, 16));
  auto temp = fs::path{path}.concat(".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out{temp, std::ios::binary};
    out << text;
    if (!out)
      return make_error(error::io_failure, "cannot write " + temp.string());
  }
  ::chmod(temp.c_str(), 0755);
  fs::rename(temp, path, ec);
  if (ec)
    return make_error(error::io_failure,
      "cannot write " + path.string() + ": " + ec.message());
  return path.string();
}

/// The identity of the real compiler `program`.
caf::expected<std::string> probe_identity(
  const std::string& backend, const std::string& program) {
  auto run = run_captured({program, "--version"}, "", 60);
  if (!run)
    return make_error(error::device_unavailable,
      program + " does not run: " + render(run.error()));
  if (run->timed_out || !run->status.exited || run->status.code != 0)
    return make_error(error::device_unavailable,
      program + " --version failed: " + to_string(run->status));
  auto line = toolchain_version_line(backend, run->output);
  if (line.empty())
    return make_error(error::device_unavailable,
      program + " --version does not name a " + backend + " release");
  return line;
}

} // namespace

std::vector<std::string> expert_link_flags(const std::string& backend,
  const task_spec& task, const candidate& c) {
  std::vector<std::string> flags;
  if (task.expert_source.empty() || c.source != task.expert_source
      || task.expert_libs.empty())
    return flags;
  // Flags come before the source file, and Debian's linker drops a library
  // named before any object that needs it unless told not to.
  if (backend == "cuda") {
    flags.emplace_back("-Xlinker");
    flags.emplace_back("--no-as-needed");
  } else {
    flags.emplace_back("-Wl,--no-as-needed");
  }
  for (const auto& lib : task.expert_libs)
    flags.push_back("-l" + lib);
  return flags;
}

std::string toolchain_version_line(
  const std::string& backend, const std::string& version_output) {
  std::string result;
  size_t start = 0;
  while (start < version_output.size()) {
    auto end = version_output.find('\n', start);
    if (end == std::string::npos)
      end = version_output.size();
    auto line = trimmed(version_output.substr(start, end - start));
    start = end + 1;
    bool wanted = backend == "cuda"
                    ? line.find("release") != std::string::npos
                    : line.find("HIP version") != std::string::npos
                        || line.find("clang version") != std::string::npos;
    if (wanted)
      result += (result.empty() ? "" : "; ") + line;
  }
  if (result.empty())
    return result;
  return (backend == "cuda" ? "nvcc: " : "hipcc: ") + result;
}

std::string toolchain_script(const std::string& backend,
  const std::string& program, const std::string& identity) {
  std::string s = "#!/bin/sh\n# Written by eat's " + backend
                  + " device (devices/gpu_toolchain.hpp): runs " + program
                  + ".\n";
  s += "if [ \"$#\" -eq 1 ] && [ \"$1\" = --version ]; then\n  printf '%s\\n' "
       + quoted(identity) + "\n  exit 0\nfi\n";
  if (backend == "cuda")
    s += "# nvcc passes -fPIC to the host compiler only through -Xcompiler.\n"
         "n=$#\nwhile [ \"$n\" -gt 0 ]; do\n  a=$1; shift; n=$((n - 1))\n"
         "  if [ \"$a\" = -fPIC ]; then set -- \"$@\" -Xcompiler -fPIC\n"
         "  else set -- \"$@\" \"$a\"; fi\ndone\n";
  return s + "exec " + quoted(program) + " \"$@\"\n";
}

caf::expected<gpu_toolchain> gpu_toolchain::make(std::string backend,
  std::string program, std::string host_program,
  std::vector<std::string> flags, std::string work_dir, double timeout_s) {
  if (backend != "cuda" && backend != "hip")
    return make_error(
      error::invalid_config, "unknown GPU backend '" + backend + "'");
  auto identity = probe_identity(backend, program);
  if (!identity)
    return std::move(identity.error());
  auto script = write_script(backend, program, *identity, work_dir);
  if (!script)
    return std::move(script.error());
  auto cache = (fs::path{work_dir} / "cache").string();
  auto device = compiler::make(*script, cache, timeout_s);
  if (!device)
    return std::move(device.error());
  device->add_installation(program);
  auto host = compiler::make(std::move(host_program), cache, timeout_s);
  if (!host)
    return std::move(host.error());
  return gpu_toolchain{std::move(backend), std::move(*device),
    std::move(*host), std::move(flags)};
}

gpu_toolchain::gpu_toolchain(std::string backend, compiler device,
  compiler host, std::vector<std::string> flags)
  : backend_(std::move(backend)), device_(std::move(device)),
    host_(std::move(host)), flags_(std::move(flags)) {
  // nop
}

std::vector<std::string> gpu_toolchain::device_flags(
  const std::string& arch) const {
  auto result = flags_;
  result.emplace_back("-std=c++17");
  if (backend_ == "cuda") {
    // The shared runtime: kernels use the runner's cudart, not a copy.
    for (const char* f : {"-cudart", "shared"})
      result.emplace_back(f);
    result.push_back("-arch=" + nvcc_arch(arch));
    // Registers, shared memory, stack and spills of each kernel, in the
    // build log (gpu_resources.hpp).
    result.emplace_back("--resource-usage");
  } else {
    result.push_back("--offload-arch=" + arch);
    result.emplace_back("-Rpass-analysis=kernel-resource-usage");
  }
  return result;
}

std::string nvcc_arch(const std::string& arch) {
  auto digits = arch.size() > 3 ? arch.substr(3) : std::string{};
  if (arch.rfind("sm_", 0) != 0 || digits.empty() || digits.size() > 4
      || digits.find_first_not_of("0123456789") != std::string::npos
      || std::stoi(digits) < 90)
    return arch;
  return arch + "a";
}

std::string gpu_toolchain::description(const std::string& arch) const {
  std::string text = device_.identity() + ";";
  for (const auto& f : shared_object_flags(device_flags(arch)))
    text += " " + f;
  return text;
}

prepared gpu_toolchain::prepare(
  const task_spec& task, const candidate& c, const std::string& arch) const {
  prepared out;
  auto ext = backend_ == "cuda" ? std::string{".cu"} : std::string{".hip"};
  auto flags = device_flags(arch);
  auto candidate_flags = flags;
  for (auto& f : expert_link_flags(backend_, task, c))
    candidate_flags.push_back(std::move(f));
  struct job {
    const compiler& comp;
    const std::string& source;
    const std::vector<std::string>& flags;
    std::string file;
    const char* who;
    eval_status failure;
    std::string& so;
  };
  job jobs[] = {
    {host_, task.reference_source, reference_flags, "reference.cpp",
      "the task's reference", eval_status::rejected, out.reference_object},
    {device_, task.baseline_source, flags, "baseline" + ext,
      "the task's baseline", eval_status::rejected, out.baseline_object},
    {device_, c.source, candidate_flags, "candidate" + ext, "the candidate",
      eval_status::compile_error, out.candidate_object},
  };
  for (auto& j : jobs) {
    auto fail = [&](std::string detail) {
      out.status = j.failure;
      out.detail = std::move(detail);
      return std::move(out);
    };
    auto result = j.comp.compile(j.source, j.flags, j.file);
    // The machine's failure (a full disk), not the source's: rejected.
    if (!result) {
      j.failure = eval_status::rejected;
      return fail(std::string{"cannot compile "} + j.who + ": "
                  + render(result.error()) + " (the device's fault)");
    }
    out.seconds += result->seconds;
    if (j.failure == eval_status::compile_error || !result->ok)
      out.build_log = truncated(std::move(result->log));
    if (!result->ok)
      return fail(std::string{j.who} + " does not compile: " + result->failure);
    j.so = result->so_path;
  }
  return out;
}

} // namespace eat::devices
