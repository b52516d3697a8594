// reference_sample_bench: what the secret sample of timed outputs compared
// with the reference ([timing] reference_samples, docs/harness.md, "Timed
// outputs against the reference") costs an evaluation.
//
// For each CPU task of the library (kernels/), the baseline is evaluated
// `--rounds` times (default 5) with the device's default timing, each time
// once with reference_samples = 0 and once with the default (4), in
// alternating order, on the same device core; the figure is the ratio of
// the median evaluation wall times, with 4 against with 0. It has no
// target: each kept call costs a reference call (with 4, two thirds of
// the correctness phase's six per workload), which weighs most where the
// kernel is fast and the reference slow (memory-bound kinds).
//
//   cmake --build BUILD_DIR --target reference_sample_bench
//   BUILD_DIR/bench/reference_sample_bench [--rounds N] [TASK...]
//
// docs/performance.md records the figures.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "devices/cpu_device.hpp"
#include "runtime/task_file.hpp"

namespace {

using namespace eat;

std::unique_ptr<devices::device> make_device(
  const std::string& work_dir, uint32_t reference_samples) {
  devices::cpu_options opts;
  opts.runner_path = EAT_RUNNER_PATH;
  opts.work_dir = work_dir;
  opts.timing.reference_samples = reference_samples;
  return bench::must(devices::make_cpu_device("bench", opts), "cpu device");
}

/// Seconds the evaluation of `task`'s baseline takes on `dev`; exits when
/// it does not pass.
double evaluate_baseline(devices::device& dev, const task_spec& task) {
  candidate c;
  c.id = "baseline";
  c.task = task.name;
  c.family = "baseline";
  c.source = task.baseline_source;
  bench::stopwatch clock;
  auto r = dev.evaluate(task, c, 7);
  auto seconds = clock.seconds();
  if (r.status != eval_status::passed) {
    std::fprintf(stderr, "reference_sample_bench: %s's baseline: %s\n",
      task.name.c_str(), r.detail.c_str());
    std::exit(1);
  }
  return seconds;
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else
      names.emplace_back(argv[i]);
  }
  std::filesystem::path tasks_dir{EAT_SOURCE_DIR "/kernels"};
  if (names.empty())
    names = bench::must(list_tasks(tasks_dir), "list tasks");
  bench::scratch_dir work;
  auto without = make_device(work.path().string(), 0);
  const auto wanted = devices::timing_options{}.reference_samples;
  auto with = make_device(work.path().string(), wanted);
  std::printf("reference_sample_bench on %s: the baseline's evaluation, "
              "reference_samples = %u against 0, %d rounds\n",
    with->description().c_str(), wanted, rounds);
  bench::print_header();
  for (const auto& name : names) {
    auto task = bench::must(load_task(tasks_dir, name), "load task");
    if (task.backend != "cpu")
      continue;
    // Compiles the kernels once, so that no round pays for it.
    evaluate_baseline(*without, task);
    std::vector<double> off;
    std::vector<double> on;
    for (int r = 0; r < rounds; ++r) {
      if (r % 2 == 0) {
        off.push_back(evaluate_baseline(*without, task));
        on.push_back(evaluate_baseline(*with, task));
      } else {
        on.push_back(evaluate_baseline(*with, task));
        off.push_back(evaluate_baseline(*without, task));
      }
    }
    char note[160];
    std::snprintf(note, sizeof note,
      "%s: median evaluation %.2f s with the sample, %.2f s without",
      name.c_str(), median(on), median(off));
    bench::print_note(note);
    bench::print_figure(name + ": evaluation time, sample / none",
      median(on) / median(off), "x", "-", true);
  }
  return 0;
}
