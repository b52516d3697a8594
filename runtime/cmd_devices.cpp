// `eat devices [--check]`: what this machine offers: the CPU, and the GPUs of
// each backend eat was built with, or why there are none.

#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

#include "actors/protocol/error.hpp"
#include "devices/compiler.hpp"
#include "devices/cpu_check.hpp"
#include "devices/cpu_device.hpp"
#include "devices/cpu_peak.hpp"
#include "devices/gpu_discovery.hpp"
#include "devices/scratch_dir.hpp"
#include "runtime/cli.hpp"
#include "runtime/paths.hpp"

namespace eat {

namespace {

constexpr const char* devices_help = R"(usage: eat devices [--check]

Lists the devices of this machine: the CPU, and for each GPU backend (cuda,
hip) the GPUs its runtime reports with model, architecture, memory and
identity, or why there are none (built without the toolkit, no driver, no
device); and which files compiles and kernels may read (Landlock). --check
also runs the CPU's peak probe on the core a CPU device uses by default
(fp32 FMA throughput and STREAM-triad bandwidth, the figures behind the
speed-of-light gate), evaluates a small sgemm there through the compiler
and eat-runner, saying how the runner's sandbox isolated it (network, PID
namespace, cap on tasks, hidden-work count, the user kernel code ran as),
and runs a small kernel on every GPU, verifying its output; eat exits 1 if
one fails.
)";

std::string gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GiB",
                static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

/// Prints one backend; returns false when a health check failed.
bool show(std::ostream& out, const std::string& backend, bool check) {
  auto runner = (executable_dir() / ("eat-" + backend + "-runner")).string();
  auto probe = devices::probe_gpus(backend, runner);
  out << backend << ": ";
  if (!probe.versions.empty())
    out << probe.versions << ", ";
  out << probe.devices.size() << " device(s)";
  if (!probe.error.empty())
    out << " (" << probe.error << ")";
  out << "\n";
  bool healthy = true;
  for (const auto& g : probe.devices) {
    out << "  " << backend << g.index << ": " << g.name << ", " << g.arch
        << ", " << gib(g.memory_bytes) << ", " << g.multiprocessors
        << " multiprocessors, " << g.clock_khz / 1000 << " MHz, " << g.uuid;
    if (check) {
      auto h = devices::check_gpu(backend, runner, g.index);
      out << ", health check " << (h.ok ? "passed" : "FAILED: " + h.detail);
      healthy = healthy && h.ok;
    }
    out << "\n";
  }
  return healthy;
}

/// Runs the CPU's peak probe on the default core; none when it failed.
std::optional<devices::cpu_peak> show_cpu_peak(std::ostream& out) {
  auto core = devices::resolve_core(-1);
  auto peak = core ? devices::measure_cpu_peak(*core)
                   : caf::expected<devices::cpu_peak>{core.error()};
  if (!peak) {
    out << "  peak probe FAILED: " << render(peak.error()) << "\n";
    return std::nullopt;
  }
  auto measured = [&](double x) {
    char buf[32];
    std::snprintf(
      buf, sizeof(buf), "%.1f", x / devices::cpu_peak_safety_factor / 1e9);
    return std::string{buf};
  };
  out << "  core " << *core << ": " << measured(peak->flops_per_s)
      << " GFLOP/s fp32 FMA, " << measured(peak->bytes_per_s)
      << " GB/s STREAM triad (the speed-of-light gate allows "
      << devices::cpu_peak_safety_factor << " times these)\n";
  return *peak;
}

/// Evaluates a small sgemm through the compiler and eat-runner (beside
/// this program) on the default core, with `peak` for the gate, and says
/// how the sandbox isolated it; false when it failed.
bool show_cpu_path(std::ostream& out, const devices::cpu_peak& peak) {
  auto dir = devices::scratch_dir::make(
    std::filesystem::temp_directory_path(), "eat-devices-check.");
  if (!dir) {
    out << "  runner check FAILED: " << render(dir.error()) << "\n";
    return false;
  }
  devices::cpu_options opts;
  opts.runner_path = (executable_dir() / "eat-runner").string();
  opts.work_dir = dir->path().string();
  opts.peak_flops_override = peak.flops_per_s;
  opts.peak_bw_override = peak.bytes_per_s;
  auto check = devices::check_cpu_path(std::move(opts));
  if (!check.ok) {
    out << "  runner check FAILED: " << check.failure << "\n";
    return false;
  }
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.1f", check.seconds);
  out << "  runner check passed (a small sgemm compiled and run in " << seconds
      << " s): " << check.sandbox << "\n";
  return true;
}

} // namespace

exit_code cmd_devices(const std::vector<std::string>& args, std::ostream& out) {
  auto parsed
    = parse_command(args, {"devices", devices_help, {}, {"check"}}, out);
  if (auto* code = std::get_if<exit_code>(&parsed))
    return *code;
  bool check = std::get<parsed_args>(parsed).options.count("check") > 0;
  out << "cpu: " << devices::cpu_model() << ", "
      << std::thread::hardware_concurrency() << " core(s) online\n"
      << "  files: " << devices::compile_confinement() << "\n";
  bool ok = true;
  if (check) {
    auto peak = show_cpu_peak(out);
    ok = peak && show_cpu_path(out, *peak);
  }
  ok = show(out, "cuda", check) && ok;
  ok = show(out, "hip", check) && ok;
  return ok ? exit_code::ok : exit_code::failed;
}

} // namespace eat
