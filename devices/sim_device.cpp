#include "devices/sim_device.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "devices/rng.hpp"
#include "devices/sha256.hpp"

namespace eat::devices {

namespace {

/// FNV-1a: the same in every build, so the landscape survives a rebuild.
uint64_t stable_hash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : s)
    h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

void wait_for(double seconds) {
  // A real wait: the sim device models latency, it does not synchronise.
  if (seconds > 0)
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

/// A standard normal draw clamped to [-3, 3] (Box-Muller).
double clamped_normal(rng& gen) {
  auto u1 = std::max(gen.uniform(), 1e-300);
  auto u2 = gen.uniform();
  auto z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  return std::clamp(z, -3.0, 3.0);
}

/// Index distance of `c`'s choice of `p` to its optimum, in [0, 1].
double distance(
  const std::string& task, const param_space& p, const candidate& c) {
  auto n = p.values.size();
  if (n < 2)
    return 0;
  auto optimum = stable_hash(task + "/" + p.name) % n;
  auto chosen = c.params.find(p.name);
  if (chosen == c.params.end())
    return 1;
  auto i = std::find(p.values.begin(), p.values.end(), chosen->second);
  if (i == p.values.end())
    return 1;
  auto index = static_cast<uint64_t>(i - p.values.begin());
  auto d = index > optimum ? index - optimum : optimum - index;
  return static_cast<double>(d) / static_cast<double>(n - 1);
}

class sim_device final : public device {
public:
  sim_device(std::string id, sim_options opts)
    : id_(std::move(id)), opts_(opts) {
    caps_.kind = "sim";
    caps_.model = "sim timing model";
    caps_.arch = "sim";
    caps_.identity = "sim:" + id_;
  }

  std::string id() const override {
    return id_;
  }

  std::string description() const override {
    return id_ + ": sim timing model (noise " + std::to_string(opts_.noise)
           + ", seed " + std::to_string(opts_.seed) + ")";
  }

  device_caps caps() const override {
    return caps_;
  }

  prepared prepare(const task_spec&, const candidate& c) const override {
    wait_for(opts_.compile_s);
    prepared out;
    out.seconds = opts_.compile_s;
    if (c.source.find("#error") != std::string::npos) {
      out.status = eval_status::compile_error;
      out.detail = "the candidate does not compile: #error in its source";
      out.build_log = "candidate.cpp: error: #error directive (sim)\n";
      return out;
    }
    out.reference_object = "sim:reference";
    out.baseline_object = "sim:baseline";
    out.candidate_object = "sim:" + sha256_hex(c.source).substr(0, 16);
    return out;
  }

  eval_result run(const task_spec& task, const candidate& c,
    const prepared& objects, uint64_t seed) override;

  std::string check_health() override {
    auto runs = runs_.load();
    if (opts_.fail_health_after == 0 || runs < opts_.fail_health_after)
      return {};
    return id_ + " fails its health check after " + std::to_string(runs)
           + " runs (fail_health_after)";
  }

private:
  workload_result time_workload(
    const workload& w, size_t index, double speedup, rng& gen) const;

  std::string id_;
  sim_options opts_;
  device_caps caps_;
  std::atomic<uint64_t> runs_{0};
};

workload_result sim_device::time_workload(
  const workload& w, size_t index, double speedup, rng& gen) const {
  workload_result r;
  r.workload = w.name;
  r.status = eval_status::passed;
  r.samples = 10;
  auto factor = std::max(0.05, 1 + opts_.noise * clamped_normal(gen));
  r.baseline_median_ns = 1e6 * static_cast<double>(index + 1);
  r.candidate_median_ns = r.baseline_median_ns / speedup * factor;
  r.candidate_mean_ns = r.candidate_median_ns * (1 + opts_.noise / 2);
  r.candidate_min_ns = r.candidate_median_ns * (1 - opts_.noise);
  r.candidate_p20_ns = r.candidate_median_ns * (1 - opts_.noise / 2);
  r.candidate_p80_ns = r.candidate_median_ns * (1 + opts_.noise / 2);
  r.candidate_cv = opts_.noise;
  r.speedup = r.baseline_median_ns / r.candidate_median_ns;
  r.speedup_low = r.speedup * (1 - 2 * opts_.noise);
  r.speedup_high = r.speedup * (1 + 2 * opts_.noise);
  return r;
}

eval_result sim_device::run(const task_spec& task, const candidate& c,
  const prepared& objects, uint64_t seed) {
  runs_ += 1;
  auto result
    = begin_result(c, seed, objects, description(), "sim (no compiler)");
  if (objects.status != eval_status::passed) {
    result.status = objects.status;
    result.detail = objects.detail;
    return result;
  }
  if (task.workloads.empty()) {
    result.status = eval_status::rejected;
    result.detail = "the task has no workloads";
    return result;
  }
  wait_for(opts_.run_s);
  result.run_s = opts_.run_s;
  result.method = "sim: deterministic landscape over template parameters, "
                  "noise factor 1 + "
                  + std::to_string(opts_.noise)
                  + " * N(0,1) clamped to 3 sigma";
  auto speedup = sim_landscape(task, c, opts_.peak_speedup);
  rng gen{derive_seed(opts_.seed ^ stable_hash(c.id), seed)};
  double log_sum = 0;
  for (size_t i = 0; i < task.workloads.size(); ++i) {
    result.workloads.push_back(
      time_workload(task.workloads[i], i, speedup, gen));
    log_sum += std::log(result.workloads.back().speedup);
  }
  result.status = eval_status::passed;
  result.geomean_speedup
    = std::exp(log_sum / static_cast<double>(result.workloads.size()));
  return result;
}

} // namespace

double sim_landscape(
  const task_spec& task, const candidate& c, double peak_speedup) {
  auto family = std::find_if(
    task.families.begin(), task.families.end(), [&](const template_family& f) {
      return f.name == c.family;
    });
  if (family == task.families.end() || family->params.empty())
    return 1;
  double q = 0;
  for (const auto& p : family->params) {
    auto d = distance(task.name, p, c);
    q += d * d;
  }
  q /= static_cast<double>(family->params.size());
  return 1 + (peak_speedup - 1) * std::exp(-4 * q);
}

std::unique_ptr<device> make_sim_device(std::string id, sim_options opts) {
  return std::make_unique<sim_device>(std::move(id), opts);
}

} // namespace eat::devices
