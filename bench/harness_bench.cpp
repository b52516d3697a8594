// harness_bench: how trustworthy and how busy the harness is, in one run.
//
//   (i)   repeatability: the CV, across 10 evaluations of one compiled
//         kernel (tiled sgemm, >= 1 ms per call) on the cpu device, of the
//         candidate's median time (goal < 1 %); and, beside it, the CV
//         of the speedups over the baseline timed interleaved with it;
//   (ii)  agreement with Google Benchmark timing the same .so in this
//         process, pinned to the same core, rotating input sets made by
//         the runner's own code (the kernel's time moves by ~15 % with
//         where its buffers fall relative to each other), in a round after
//         each evaluation of (i) (this VM
//         changes speed for seconds at a time, so the two must alternate):
//         the median of its rounds' medians of single calls against the
//         median of the harness's medians (goal: within 5 %), and for
//         comparison the same with batches of 10 calls; and the CV of
//         GB's round medians, which shows how much of (i)'s CV the
//         machine's own drift accounts for;
//   (iii) device utilisation with 100 queued candidates: a device pool over
//         one cpu device, distinct template instances (every compile is
//         real), busy_s / wall_s as the pool measures them (goal >= 95 %).
//
// Usage: harness_bench [--quick] [--candidates N] [--core C]
//                      [--min-time S] [--max-rel-se X] [--kernel-processes]
// --quick: 5 evaluations in (i), m=n=k=256, 20 candidates in (iii).
// --core: the core the devices (and Google Benchmark) use; default the last.
// --min-time, --max-rel-se: the stopping rule of (i) (timing_options'
// min_time_s and max_rel_se; default the device's defaults), to tell the
// sampling error of a median from the machine's drift.
// --kernel-processes: the devices run each kernel in a process of its own
// ([devices.cpu] kernel_processes), whose round trip the harness takes off
// every sample: (ii) then shows how well that is done.
// docs/performance.md records the figures.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <dlfcn.h>
#include <sched.h>

#include <benchmark/benchmark.h>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/device_pool.hpp"
#include "bench/bench_util.hpp"
#include "devices/cpu_device.hpp"
#include "devices/kind.hpp"
#include "devices/rng.hpp"
#include "devices/runner/checks.hpp"
#include "devices/runner/timing_sets.hpp"
#include "runtime/system_setup.hpp"

namespace {

using namespace eat;
using gemm_fn
  = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t);

struct settings {
  bool quick = false;
  int evaluations = 10;
  int64_t size = 320;
  int candidates = 100;
  /// Core of the cpu devices; -1: the last one this process may use.
  int core = -1;
  /// The stopping rule of (i).
  devices::timing_options timing;
  /// cpu_options::kernel_processes of every device.
  bool kernel_processes = false;
};

settings parse(int argc, char** argv) {
  settings s;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      s.quick = true;
      s.evaluations = 5;
      s.size = 256;
      s.candidates = 20;
    } else if (std::strcmp(argv[i], "--core") == 0 && i + 1 < argc) {
      s.core = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--candidates") == 0 && i + 1 < argc) {
      s.candidates = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--min-time") == 0 && i + 1 < argc) {
      s.timing.min_time_s = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--max-rel-se") == 0 && i + 1 < argc) {
      s.timing.max_rel_se = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--kernel-processes") == 0) {
      s.kernel_processes = true;
    } else {
      std::fprintf(stderr, "usage: harness_bench [--quick] [--candidates N] "
                           "[--core C] [--min-time S] [--max-rel-se X] "
                           "[--kernel-processes]\n");
      std::exit(2);
    }
  }
  if (!(s.timing.min_time_s >= 0) || !(s.timing.max_rel_se > 0)) {
    std::fprintf(stderr, "harness_bench: --min-time must be >= 0 and "
                         "--max-rel-se > 0\n");
    std::exit(2);
  }
  return s;
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  auto n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

double cv(const std::vector<double>& xs) {
  double mean = 0;
  for (auto x : xs)
    mean += x / static_cast<double>(xs.size());
  double var = 0;
  for (auto x : xs)
    var += (x - mean) * (x - mean) / static_cast<double>(xs.size() - 1);
  return std::sqrt(var) / mean;
}

template<class T>
T unwrap(caf::expected<T> x, const char* what) {
  if (!x) {
    std::fprintf(
      stderr, "harness_bench: %s: %s\n", what, render(x.error()).c_str());
    std::exit(1);
  }
  return std::move(*x);
}

devices::cpu_options device_options(
  const std::string& work_dir, const settings& s) {
  devices::cpu_options opts;
  opts.core = s.core;
  opts.kernel_processes = s.kernel_processes;
  opts.runner_path = EAT_RUNNER_PATH;
  opts.work_dir = work_dir;
  return opts;
}

// -- the sgemm task and its tiled template (kernels/sgemm/) -------------------

std::string read_source(const std::string& relative) {
  auto path = std::filesystem::path{EAT_SOURCE_DIR} / relative;
  std::ifstream in{path, std::ios::binary};
  if (!in) {
    std::fprintf(stderr, "harness_bench: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return std::string{std::istreambuf_iterator<char>{in}, {}};
}

task_spec sgemm_task(int64_t size) {
  task_spec task;
  task.name = "sgemm";
  task.kind = "gemm";
  task.dtype = "float32";
  task.atol = 1e-4;
  task.rtol = 1e-4;
  auto n = std::to_string(size);
  task.workloads = {
    {"m" + n + "_n" + n + "_k" + n, {{"m", size}, {"n", size}, {"k", size}}}};
  task.reference_source = read_source("kernels/sgemm/reference.cpp");
  task.baseline_source = read_source("kernels/sgemm/baseline.cpp");
  return task;
}

candidate tiled(
  std::string id, const std::string& order, int tm, int tn, int tk) {
  auto text = read_source("kernels/sgemm/tiled.cpp.in");
  auto replace = [&](const std::string& key, const std::string& value) {
    auto placeholder = "{{" + key + "}}";
    for (auto pos = text.find(placeholder); pos != std::string::npos;
         pos = text.find(placeholder, pos + value.size()))
      text.replace(pos, placeholder.size(), value);
  };
  replace("loop_order", order);
  replace("tile_m", std::to_string(tm));
  replace("tile_n", std::to_string(tn));
  replace("tile_k", std::to_string(tk));
  candidate c;
  c.id = std::move(id);
  c.team = "t0";
  c.agent = "bench";
  c.task = "sgemm";
  c.family = "tiled";
  c.params = {{"loop_order", order}, {"tile_m", std::to_string(tm)},
    {"tile_n", std::to_string(tn)}, {"tile_k", std::to_string(tk)}};
  c.source = std::move(text);
  return c;
}

// -- (ii) Google Benchmark
// -----------------------------------------------------

/// Collects the median aggregate of each benchmark, by name, and prints
/// nothing (the bench prints one line per round).
class median_reporter : public benchmark::BenchmarkReporter {
public:
  bool ReportContext(const Context&) override {
    return true;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs)
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median")
        median_ns[r.run_name.function_name] = r.GetAdjustedRealTime();
  }
  std::map<std::string, double> median_ns;
};

/// Google Benchmark's medians for one round: of single calls (one call per
/// repetition, as each harness sample is one call), and of the means of
/// batches of 10 back-to-back calls (GB's usual way).
struct gb_figures {
  double single_ns = 0;
  double batch_ns = 0;
};

/// The kernel of a `.so`, registered with Google Benchmark once, over the
/// runner's rotation of input sets, on the device's core.
class gb_timer {
public:
  gb_timer(const std::string& so_path, int64_t size, int core,
    int repetitions) {
    auto* lib = ::dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      std::fprintf(stderr, "harness_bench: dlopen: %s\n", ::dlerror());
      std::exit(1);
    }
    fn_ = reinterpret_cast<gemm_fn>(::dlsym(lib, "eat_gemm"));
    size_ = size;
    core_ = core;
    // The runner's input sets, made by the runner's own code (inputs, and
    // an output for each kernel, laid out as in the runner), as many as it
    // makes (plan_rotation: max(2 x LLC, 32 MiB) up to 128 MiB and at most
    // max_sets, with a flush of each call's inputs where the sets fall
    // short of that, as the runner does; its default memory budget).
    auto task = sgemm_task(size);
    auto p = devices::problem::make(*devices::find_kind("gemm"),
      task.workloads[0], devices::tolerance_of(task));
    auto plan = devices::plan_rotation(devices::last_level_cache_bytes());
    // The runner's budget: a quarter of the device's address-space limit.
    auto budget = (devices::cpu_options{}.address_space_mib << 20) / 4;
    auto count = devices::set_count(
      plan.target_bytes, budget, p.set_bytes(), devices::set_footprint(p));
    sets_ = devices::make_sets(p, count, 7);
    flush_ = devices::flushes(plan, count, p.set_bytes());
    auto body = [this](benchmark::State& state) {
      for (auto _ : state) {
        auto& set = sets_[next_++ % sets_.size()];
        if (flush_) {
          // As the runner does when its rotation cannot exceed the cache.
          state.PauseTiming();
          devices::flush_inputs(set);
          state.ResumeTiming();
        }
        fn_(static_cast<const float*>(set.pointers[0]),
          static_cast<const float*>(set.pointers[1]),
          static_cast<float*>(set.candidate_out.pointers[0]), size_, size_,
          size_);
        benchmark::DoNotOptimize(set.candidate_out.pointers[0]);
        benchmark::ClobberMemory();
      }
    };
    benchmark::RegisterBenchmark("eat_gemm_single", body)
      ->Unit(benchmark::kNanosecond)
      ->Iterations(1)
      ->Repetitions(repetitions)
      ->ReportAggregatesOnly(true)
      ->UseRealTime();
    benchmark::RegisterBenchmark("eat_gemm_batch10", body)
      ->Unit(benchmark::kNanosecond)
      ->Iterations(10)
      ->Repetitions(std::max(repetitions / 10, 5))
      ->ReportAggregatesOnly(true)
      ->UseRealTime();
  }

  /// Times one round on the device's core (the bench thread is moved there
  /// and back, so that the device's runner has the core to itself).
  gb_figures round() {
    cpu_set_t old_set;
    ::sched_getaffinity(0, sizeof(old_set), &old_set);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core_, &set);
    ::sched_setaffinity(0, sizeof(set), &set);
    median_reporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    ::sched_setaffinity(0, sizeof(old_set), &old_set);
    return {reporter.median_ns["eat_gemm_single"],
            reporter.median_ns["eat_gemm_batch10"]};
  }

private:
  gemm_fn fn_ = nullptr;
  bool flush_ = false;
  int64_t size_ = 0;
  int core_ = 0;
  std::vector<devices::input_set> sets_;
  size_t next_ = 0;
};

// -- (i) repeatability, alternating with (ii)
// ---------------------------------------------------------

struct repeat_figures {
  std::vector<double> medians_ns;
  std::vector<double> gb_single_ns;
  std::vector<double> gb_batch_ns;
  /// Each evaluation's speedup over the task's baseline, whose samples
  /// are interleaved with the kernel's: a drift of the machine moves both.
  std::vector<double> speedups;
};

/// Evaluates the kernel `s.evaluations` times; after each evaluation,
/// Google Benchmark times the same .so for a round, so that both sample the
/// same states of the machine (on this VM the same calls run at ~1.75 or
/// ~2.0 ms for seconds at a time, in a standalone program too).
repeat_figures repeatability(const settings& s, devices::device& dev,
  const task_spec& task, const candidate& c, int core) {
  auto objects = dev.prepare(task, c);
  if (objects.status != eval_status::passed) {
    std::fprintf(stderr, "harness_bench: cannot compile: %s\n%s\n",
      objects.detail.c_str(), objects.build_log.c_str());
    std::exit(1);
  }
  gb_timer gb{objects.candidate_object, s.size, core, s.quick ? 40 : 50};
  repeat_figures out;
  for (int i = 0; i < s.evaluations; ++i) {
    auto r = dev.run(task, c, objects, 1000 + static_cast<uint64_t>(i));
    if (r.status != eval_status::passed || r.workloads.empty()) {
      std::fprintf(stderr, "harness_bench: evaluation %d: %s %s\n", i,
        to_string(r.status).c_str(), r.detail.c_str());
      std::exit(1);
    }
    const auto& w = r.workloads[0];
    out.medians_ns.push_back(w.candidate_median_ns);
    out.speedups.push_back(w.speedup);
    auto g = gb.round();
    out.gb_single_ns.push_back(g.single_ns);
    out.gb_batch_ns.push_back(g.batch_ns);
    std::printf("  evaluation %2d: median %.3f ms, %u samples, sample CV "
                "%.2f %%; then Google Benchmark: %.3f ms single calls, "
                "%.3f ms batches of 10\n",
      i + 1, w.candidate_median_ns / 1e6, w.samples, 100 * w.candidate_cv,
      g.single_ns / 1e6, g.batch_ns / 1e6);
  }
  return out;
}

// -- (iii) utilisation
// ---------------------------------------------------------

std::vector<candidate> distinct_candidates(int n) {
  std::vector<candidate> out;
  const char* orders[] = {"ikj", "kij", "ijk", "jik", "jki", "kji"};
  const int tiles[] = {4, 8, 16, 32, 64, 128};
  for (int i = 0; static_cast<int>(out.size()) < n; ++i) {
    auto order = orders[i % 6];
    int tm = tiles[(i / 6) % 6];
    int tn = tiles[(i / 36) % 6];
    int tk = tiles[(i / 216) % 6];
    auto c = tiled("c" + std::to_string(i), order, tm, tn, tk);
    c.team = "t" + std::to_string(i % 10);
    out.push_back(std::move(c));
  }
  return out;
}

device_load utilisation(const settings& s, const std::string& work_dir) {
  auto opts = device_options(work_dir, s);
  // Slices of at most ~2 s of sampling keep 100 candidates within minutes.
  opts.timing.max_time_s = 2;
  auto dev
    = unwrap(devices::make_cpu_device("cpu0", opts), "cpu device for the pool");
  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  caf::actor_system sys{cfg};
  // As `eat run` has it: compiles off the device's core.
  pool_options pool_opts;
  pool_opts.compile_cores
    = devices::cores_besides({unwrap(devices::resolve_core(s.core), "core")});
  auto pool = spawn_device_pool(
    sys, {std::shared_ptr<devices::device>{std::move(dev)}}, pool_opts);
  auto task = sgemm_task(64);
  caf::scoped_actor self{sys};
  auto cs = distinct_candidates(s.candidates);
  using handle = decltype(self->request(
    pool, caf::infinite, evaluate_atom_v, task, candidate{}, uint64_t{0}));
  std::vector<handle> handles;
  for (size_t i = 0; i < cs.size(); ++i)
    handles.push_back(
      self->request(pool, caf::infinite, evaluate_atom_v, task, cs[i], i));
  int passed = 0;
  double compile_s = 0;
  for (auto& h : handles)
    h.receive(
      [&](eval_result& r) {
        passed += r.status == eval_status::passed;
        compile_s += r.compile_s;
      },
      [&](caf::error& err) {
        std::fprintf(stderr, "pool: %s\n", render(err).c_str());
      });
  device_load load;
  self->request(pool, caf::infinite, status_atom_v)
    .receive(
      [&](pool_status& st) {
        load = st.devices.at(0);
      },
      [&](caf::error&) {});
  std::printf("  %d candidates, %d passed, %llu timed slices on %s; mean "
              "compile %.2f s, mean slice %.2f s\n",
    s.candidates, passed, static_cast<unsigned long long>(load.evaluations),
    load.device.c_str(), compile_s / s.candidates,
    load.busy_s / std::max<double>(1, load.evaluations));
  self->send_exit(pool, caf::exit_reason::user_shutdown);
  return load;
}

} // namespace

static std::string load_average() {
  std::ifstream in{"/proc/loadavg"};
  std::string one;
  in >> one;
  return one.empty() ? "unknown" : one;
}

int main(int argc, char** argv) {
  // Line by line, so that a log shows each evaluation as it ends.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  auto s = parse(argc, argv);
  std::printf("load average at start: %s\n", load_average().c_str());
  bench::scratch_dir scratch;
  auto opts = device_options((scratch.path() / "i").string(), s);
  opts.timing = s.timing;
  auto dev = unwrap(devices::make_cpu_device("cpu0", opts), "cpu device");
  auto core = unwrap(devices::resolve_core(s.core), "core");
  auto task = sgemm_task(s.size);
  auto c = tiled("tiled", "ikj", 32, 256, 64);
  std::printf(
    "(i) %d evaluations of tiled ikj 32x256x64 at m=n=k=%lld on core %d "
    "(stopping at >= %g s and a relative SE of the median < %g), (ii) each "
    "followed by a Google Benchmark round\n",
    s.evaluations, static_cast<long long>(s.size), core, s.timing.min_time_s,
    s.timing.max_rel_se);
  auto rep = repeatability(s, *dev, task, c, core);
  auto harness_median = median(rep.medians_ns);
  gb_figures gb{median(rep.gb_single_ns), median(rep.gb_batch_ns)};
  std::printf("(iii) device pool over one cpu device, %d queued candidates\n",
    s.candidates);
  auto load = utilisation(s, (scratch.path() / "iii").string());
  auto util = load.wall_s > 0 ? load.busy_s / load.wall_s : 0;
  std::printf("\nharness_bench%s%s (load average now %s, %u hardware "
              "threads)\n",
    s.quick ? " --quick" : "", s.kernel_processes ? " --kernel-processes" : "",
    load_average().c_str(), std::thread::hardware_concurrency());
  std::printf("  CV of %d repeated evaluations: %.2f %%   (goal < 1 %%)\n",
    s.evaluations, 100 * cv(rep.medians_ns));
  std::printf("  CV of their speedups over the interleaved baseline: %.2f %% "
              "(%.3fx median)\n",
    100 * cv(rep.speedups), median(rep.speedups));
  // The same kernel timed by another harness in the same machine states:
  // how much of the CV above is the machine's.
  std::printf("  CV of Google Benchmark's %d round medians: %.2f %% single "
              "calls, %.2f %% batches of 10\n",
    s.evaluations, 100 * cv(rep.gb_single_ns), 100 * cv(rep.gb_batch_ns));
  std::printf("  Google Benchmark / harness median, single calls: %.3f ms "
              "/ %.3f ms = %.3f   (goal within 5 %%)\n",
    gb.single_ns / 1e6, harness_median / 1e6, gb.single_ns / harness_median);
  std::printf("  Google Benchmark / harness median, batches of 10 (mean "
              "per call): %.3f ms / %.3f ms = %.3f\n",
    gb.batch_ns / 1e6, harness_median / 1e6, gb.batch_ns / harness_median);
  std::printf("  device utilisation: %.1f s busy / %.1f s wall = %.1f %%   "
              "(goal >= 95 %%)\n",
    load.busy_s, load.wall_s, 100 * util);
  return 0;
}
