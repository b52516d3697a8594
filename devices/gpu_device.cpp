#include "devices/gpu_device.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <utility>

#include <unistd.h>

#include "actors/protocol/error.hpp"
#include "devices/cpu_device.hpp"
#include "devices/gpu_discovery.hpp"
#include "devices/gpu_peaks.hpp"
#include "devices/gpu_runner/gpu_kind.hpp"
#include "devices/gpu_runner_client.hpp"
#include "devices/gpu_toolchain.hpp"
#include "devices/gpu_visibility.hpp"
#include "devices/kind.hpp"
#include "devices/run_as.hpp"
#include "devices/scoring.hpp"

namespace eat::devices {

namespace fs = std::filesystem;

namespace {

std::string short_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", x);
  return buf;
}

std::string peak_text(const cpu_peak& peak) {
  return "peak ~" + short_number(peak.flops_per_s / 1e12) + " TFLOP/s, ~"
         + short_number(peak.bytes_per_s / 1e9) + " GB/s";
}

std::string measurement_method(const timing_options& t, const std::string& b) {
  auto events = b == "cuda" ? "cudaEvent" : "hipEvent";
  return b + ": " + events + " pairs around each call plus a device-wide "
         + "synchronise; before each sample the output is poisoned, L2 "
         + "flushed (memset of a buffer >= 2x L2) and persisting L2 reset; "
         + "baseline and candidate interleaved in random order; inputs "
         + "drawn anew every round; " + std::to_string(t.warmup)
         + " warm-up calls; stop at >= " + std::to_string(t.min_samples)
         + " samples and relative SE of the median < "
         + short_number(t.max_rel_se) + ", or after "
         + short_number(t.max_time_s)
         + " s; speedup of medians with a paired bootstrap 95% CI";
}

/// What the device knows about its GPU, fixed when it is made.
struct gpu_setup {
  std::string backend;
  gpu_info info;
  std::string versions;
  cpu_peak peak;
  std::string peak_source;
  /// fp16/bf16 on the tensor/matrix units: the gate's FLOP/s for tasks
  /// with half-precision inputs (at least peak.flops_per_s).
  double half_flops = 0;
  int core = 0;
  /// The runner's environment that shows it only this GPU (only_its_gpu),
  /// else empty.
  std::vector<std::string> runner_env;
};

/// What the method line says about the GPUs kernel code could see.
std::string visibility_note(
  const gpu_runner_reply& r, const std::vector<std::string>& env) {
  if (env.empty() || r.visible_gpus != 1)
    return "kernel code saw " + std::to_string(r.visible_gpus)
           + (r.visible_gpus == 1 ? " GPU" : " GPUs");
  return "kernel code saw only its GPU (" + env.front() + ")";
}

/// True if a definition task has float16 or bfloat16 inputs, which a kernel
/// may feed to the tensor/matrix units.
bool has_half_inputs(const task_spec& task) {
  for (const auto& w : task.workloads)
    for (const auto& a : w.inputs)
      if (a.dtype == "float16" || a.dtype == "bfloat16")
        return true;
  return false;
}

class gpu_device final : public device {
public:
  gpu_device(std::string id, gpu_options opts, gpu_toolchain tools,
    gpu_setup setup)
    : id_(std::move(id)), opts_(std::move(opts)), tools_(std::move(tools)),
      setup_(std::move(setup)) {
    const auto& g = setup_.info;
    caps_.kind = setup_.backend;
    caps_.model = g.name;
    caps_.arch = g.arch;
    caps_.memory_bytes = g.memory_bytes;
    caps_.peak_flops = setup_.peak.flops_per_s;
    caps_.peak_bytes_per_s = setup_.peak.bytes_per_s;
    caps_.identity = g.uuid;
    description_ = id_ + ": " + g.name + " (" + g.arch + ", " + g.uuid
                   + ", GPU " + std::to_string(g.index) + "), "
                   + setup_.versions + ", " + tools_.identity() + ", "
                   + peak_text(setup_.peak) + " (" + setup_.peak_source + ")";
  }

  std::string id() const override {
    return id_;
  }

  std::string description() const override {
    return description_;
  }

  device_caps caps() const override {
    return caps_;
  }

  prepared prepare(const task_spec& task, const candidate& c) const override {
    prepared out;
    out.status = eval_status::rejected;
    if (task.backend != setup_.backend)
      out.detail = "task '" + task.name + "' is for backend '" + task.backend
                   + "', not " + setup_.backend;
    else if (auto why = check_gpu_task(task); !why.empty())
      out.detail = std::move(why);
    else
      return tools_.prepare(task, c, setup_.info.arch);
    return out;
  }

  eval_result run(const task_spec& task, const candidate& c,
    const prepared& objects, uint64_t seed) override;

  /// After a run whose runner answered (its kernels ran on the GPU and
  /// it did not fail there), the GPU is known to be healthy; otherwise a
  /// fresh runner runs a known kernel on it.
  std::string check_health() override {
    if (std::exchange(answered_, false))
      return {};
    auto health
      = check_gpu(setup_.backend, opts_.runner_path, setup_.info.index);
    return health.ok ? std::string{} : "health check failed: " + health.detail;
  }

private:
  gpu_runner_request make_request(
    const task_spec& task, const prepared& so, uint64_t seed) const;

  std::string id_;
  gpu_options opts_;
  gpu_toolchain tools_;
  gpu_setup setup_;
  device_caps caps_;
  std::string description_;
  /// Whether the last run left the GPU known to be healthy: its runner
  /// answered with no runtime error, or it did not use the GPU.
  bool answered_ = false;
  /// The NVIDIA device files, held open (CUDA only; see gpu_discovery.hpp).
  std::shared_ptr<const void> initialised_ = keep_initialised(setup_.backend);
};

gpu_runner_request gpu_device::make_request(
  const task_spec& task, const prepared& so, uint64_t seed) const {
  gpu_runner_request req;
  static_cast<runner_request&>(req) = make_runner_request(
    task, so, seed, opts_.timing, setup_.core, opts_.eval_timeout_s);
  req.limits.address_space_mib = 0; // not applied by GPU runners
  req.limits.run_as_uid = opts_.run_as_uid;
  req.limits.run_as_gid = opts_.run_as_gid;
  req.limits.user_namespace = opts_.user_namespace;
  req.backend = setup_.backend;
  // Started seeing only its GPU, the runner finds it at index 0.
  req.only_gpu = !setup_.runner_env.empty();
  req.gpu = req.only_gpu ? 0 : setup_.info.index;
  req.identity = setup_.info.uuid;
  return req;
}

eval_result gpu_device::run(const task_spec& task, const candidate& c,
  const prepared& prepared_objects, uint64_t seed) {
  prepared again;
  const auto& objects = kept_or_again(*this, task, c, prepared_objects, again);
  auto result = begin_result(
    c, seed, objects, description_, tools_.description(setup_.info.arch));
  auto fail = [&](eval_status status, std::string detail) {
    result.status = status;
    result.detail = std::move(detail);
    return std::move(result);
  };
  if (objects.status != eval_status::passed) {
    answered_ = true; // the GPU was not used
    return fail(objects.status, objects.detail);
  }
  runner_launch launch{opts_.runner_path,
    (fs::path{opts_.work_dir} / "scratch").string(), opts_.eval_timeout_s,
    setup_.runner_env};
  auto run = run_gpu_runner(launch, make_request(task, objects, seed));
  answered_ = run && run->common.reply
              && run->common.reply->status != eval_status::runtime_error;
  if (!run)
    return fail(eval_status::runtime_error,
      "cannot run the candidate: " + render(run.error()));
  result.run_s = run->common.seconds;
  auto gate = setup_.peak;
  if (has_half_inputs(task))
    gate.flops_per_s = setup_.half_flops;
  result.method = measurement_method(opts_.timing, setup_.backend)
                  + "; speed-of-light gate: " + peak_text(gate);
  if (run->reply)
    result.method += "; L2 flush "
                     + std::to_string(run->reply->flush_bytes >> 20) + " MiB; "
                     + run->reply->gpu_notes + "; "
                     + visibility_note(*run->reply, setup_.runner_env) + "; "
                     + isolation_note(*run->reply) + "; "
                     + kernel_user_note(run->reply->kernel_uid);
  if (!run->common.reply)
    return fail(run->common.status, std::move(run->common.detail));
  auto scored = apply_speed_of_light(
    score_reply(*run->common.reply, task.workloads, seed),
    *find_kind(task.kind), task.workloads, gate, 1.0);
  result.workloads = std::move(scored.workloads);
  result.geomean_speedup = scored.geomean_speedup;
  result.status = scored.status;
  result.detail = std::move(scored.detail);
  return result;
}

/// How many times a device-to-device copy's bandwidth the gate allows for a
/// model the table lacks: a copy reaches 80-90 % of the memory's rated
/// bandwidth, and a kernel that only reads can beat it.
constexpr double unknown_model_copy_slack = 1.25;

/// The peaks of the gate: the table's, the datasheet's ceilings, or for a
/// model the table lacks an estimate and 1.25 times the measured copy
/// bandwidth; a measured copy faster than the table wins, up to 1.25
/// times the table's; overrides win.
caf::expected<std::pair<cpu_peak, std::string>> device_peak(
  const std::string& backend, const gpu_info& g, const gpu_options& opts) {
  cpu_peak peak;
  std::string source;
  if (auto table = tabled_peaks(g.name, g.multiprocessors)) {
    peak = {table->fp32_gate_flops(), table->bytes_per_s};
    source = "table: " + table->model;
  } else {
    peak.flops_per_s = estimated_peak_flops(g.multiprocessors, g.clock_khz);
    source = "model not in the table: FLOP/s estimated from SMs x clock";
  }
  if (opts.peak_bw_override <= 0) {
    auto measured = measure_copy_bandwidth(backend, opts.runner_path, g.index);
    if (!measured)
      return std::move(measured.error());
    auto copy = " a device-to-device copy measured "
                + short_number(*measured / 1e9) + " GB/s";
    if (peak.bytes_per_s <= 0) {
      peak.bytes_per_s = unknown_model_copy_slack * *measured;
      source += "; bandwidth 1.25 x" + copy;
    } else if (*measured > peak.bytes_per_s) {
      // Above the memory's rated ceiling: a newer part, or a copy served
      // by a cache or never done. Far above it, the gate would let
      // anything pass; it keeps 1.25 times the table's.
      auto cap = unknown_model_copy_slack * peak.bytes_per_s;
      source += "; bandwidth:" + copy + ", above the table's";
      if (*measured > cap)
        source += " (taken as 1.25 x the table's)";
      peak.bytes_per_s = std::min(*measured, cap);
    } else {
      source += ";" + copy;
    }
  }
  if (opts.peak_flops_override > 0)
    peak.flops_per_s = opts.peak_flops_override;
  if (opts.peak_bw_override > 0)
    peak.bytes_per_s = opts.peak_bw_override;
  return std::pair{peak, source};
}

/// The gate's FLOP/s for half-precision inputs: the table's fp16/bf16
/// tensor rate, never below `peak`'s (the estimate for unknown models is
/// already a tensor-core rate); the override wins.
double half_peak_flops(
  const gpu_info& g, const cpu_peak& peak, const gpu_options& opts) {
  if (opts.peak_flops_override > 0)
    return opts.peak_flops_override;
  auto table = tabled_peaks(g.name, g.multiprocessors);
  return std::max(peak.flops_per_s, table ? table->bf16_flops : 0.0);
}

/// GPU `index` of `backend` in `probe`, and the runtime's versions.
caf::expected<std::pair<gpu_info, std::string>> find_gpu(
  const std::string& backend, const std::string& id, int index,
  const gpu_probe_result& probe) {
  auto unavailable = [&](std::string why) {
    return make_error(error::device_unavailable,
      backend + " device " + id + ": " + std::move(why));
  };
  if (!probe.built)
    return unavailable(probe.error);
  for (const auto& g : probe.devices)
    if (g.index == index)
      return std::pair{g, probe.versions};
  if (!probe.error.empty())
    return unavailable("no usable GPU (" + probe.error + ")");
  return unavailable("no GPU with index " + std::to_string(index) + " ("
                     + std::to_string(probe.devices.size()) + " found)");
}

/// Checks the runner and work_dir options, making both paths absolute.
caf::expected<void> resolve_paths(const std::string& id, gpu_options& opts) {
  std::error_code ec;
  auto runner = fs::absolute(opts.runner_path, ec);
  if (opts.runner_path.empty() || ec || ::access(runner.c_str(), X_OK) != 0)
    return make_error(error::device_unavailable,
      id + ": no executable GPU runner at '" + opts.runner_path + "'");
  opts.runner_path = runner.string();
  if (opts.work_dir.empty())
    return make_error(error::invalid_config, id + ": work_dir is not set");
  auto work_dir = fs::absolute(opts.work_dir, ec);
  if (!ec)
    fs::create_directories(work_dir / "scratch", ec);
  if (ec)
    return make_error(error::io_failure,
      id + ": cannot create " + opts.work_dir + "/scratch: " + ec.message());
  opts.work_dir = work_dir.string();
  return {};
}

caf::expected<std::unique_ptr<device>> make_gpu_device(
  const std::string& backend, std::string id, int index, gpu_options opts,
  const gpu_probe_result& probe) {
  auto found = find_gpu(backend, id, index, probe);
  if (!found)
    return std::move(found.error());
  return make_gpu_device_for(std::move(id), std::move(found->first),
    std::move(found->second), std::move(opts));
}

} // namespace

caf::expected<std::unique_ptr<device>> make_gpu_device_for(
  std::string id, gpu_info gpu, std::string versions, gpu_options opts) {
  if (gpu.backend != "cuda" && gpu.backend != "hip")
    return make_error(
      error::invalid_config, "unknown GPU backend '" + gpu.backend + "'");
  gpu_setup setup;
  setup.backend = gpu.backend;
  setup.info = std::move(gpu);
  setup.versions = std::move(versions);
  const auto& backend = setup.backend;
  if (auto ok = resolve_paths(id, opts); !ok)
    return std::move(ok.error());
  run_as_ids ids;
  if (auto err = resolve_run_as(backend + " device " + id, opts.run_as, ids))
    return err;
  opts.run_as_uid = ids.uid;
  opts.run_as_gid = ids.gid;
  if (opts.compiler.empty())
    opts.compiler = backend == "cuda" ? "nvcc" : "hipcc";
  auto tools = gpu_toolchain::make(backend, opts.compiler, opts.host_compiler,
    opts.flags, opts.work_dir, opts.compile_timeout_s);
  if (!tools)
    return std::move(tools.error());
  auto core = resolve_core(opts.core);
  if (!core)
    return std::move(core.error());
  setup.core = *core;
  auto peak = device_peak(backend, setup.info, opts);
  if (!peak)
    return std::move(peak.error());
  std::tie(setup.peak, setup.peak_source) = *peak;
  setup.half_flops = half_peak_flops(setup.info, setup.peak, opts);
  if (opts.only_its_gpu) {
    auto env = only_gpu_environment(backend, setup.info.index);
    if (!env)
      return make_error(error::invalid_config,
        backend + " device " + id + ": " + render(env.error()));
    setup.runner_env = std::move(*env);
  }
  return std::unique_ptr<device>{std::make_unique<gpu_device>(
    std::move(id), std::move(opts), std::move(*tools), std::move(setup))};
}

caf::expected<std::unique_ptr<device>> make_cuda_device(
  std::string id, int index, gpu_options opts) {
  auto probe = probe_gpus("cuda", opts.runner_path);
  return make_gpu_device("cuda", std::move(id), index, std::move(opts), probe);
}

caf::expected<std::unique_ptr<device>> make_hip_device(
  std::string id, int index, gpu_options opts) {
  auto probe = probe_gpus("hip", opts.runner_path);
  return make_gpu_device("hip", std::move(id), index, std::move(opts), probe);
}

caf::expected<std::vector<std::unique_ptr<device>>> make_gpu_devices(
  std::string_view backend, const gpu_options& opts) {
  if (backend != "cuda" && backend != "hip")
    return make_error(error::invalid_config,
      "unknown GPU backend '" + std::string{backend} + "'");
  // One probe for all of them: each is a runner started.
  auto probe = probe_gpus(std::string{backend}, opts.runner_path);
  auto indices = opts.gpus;
  if (indices.empty()) {
    for (const auto& g : probe.devices)
      indices.push_back(g.index);
    if (indices.empty())
      return make_error(error::device_unavailable,
        std::string{backend} + ": no GPU (" + probe.error + ")");
  }
  std::vector<std::unique_ptr<device>> result;
  for (auto index : indices) {
    auto dev = make_gpu_device(std::string{backend},
      std::string{backend} + std::to_string(index), index, opts, probe);
    if (!dev)
      return std::move(dev.error());
    result.push_back(std::move(*dev));
  }
  return result;
}

} // namespace eat::devices
