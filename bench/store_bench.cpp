// store_bench: how fast the store is, in one run, in a scratch directory.
//
//   - events appended per second, one transaction each (each commit syncs to
//     disk) and in batches of 1,000, with 300-byte bodies;
//   - the same records written with raw LMDB puts in the same batching: the
//     ratio event_log / raw is the log's overhead;
//   - events read per second (event_log::read in pages);
//   - the time to rebuild a run's state from 1,000,000 events of a realistic
//     log (read in pages, then eat::rebuild);
//   - file-tree puts per second of small files, alone and batched.
//
// Each figure is printed with its target and PASS or MISS; docs/performance.md
// records a run. Not a test (ctest does not run it): the figures depend on the
// disk and on what else the machine is doing.
//
// Usage: store_bench [--quick]    --quick divides the counts by 10, for a
// smoke run whose figures are not comparable with the documented ones.

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "actors/protocol/wire.hpp"
#include "bench/bench_util.hpp"
#include "bench/raw_env.hpp"
#include "bench/synthetic_run.hpp"
#include "persistence/event_log.hpp"
#include "persistence/file_tree.hpp"
#include "persistence/run_history.hpp"
#include "persistence/store.hpp"

namespace fs = std::filesystem;
using eat::event;
using eat::bench::must;
using eat::bench::print_figure;
using eat::bench::print_note;
using eat::bench::raw_env;
using eat::bench::stopwatch;
using eat::bench::tally;
using eat::persistence::event_log;
using eat::persistence::file_tree;
using eat::persistence::store;
using eat::persistence::txn;

namespace {

/// Counts of one benchmark run.
struct counts {
  size_t single_appends = 2'000;
  size_t batched_appends = 200'000;
  size_t batch = 1'000;
  size_t read_page = 10'000;
  uint64_t rebuild_events = 1'000'000;
  size_t single_puts = 1'000;
  size_t batched_puts = 100'000;
};

constexpr int64_t fixed_ms = 1'700'000'000'000;

/// An event with a 300-byte body that varies with `i`.
event bench_event(size_t i) {
  event e;
  e.kind = eat::event_kind::candidate_submitted;
  e.unix_ms = fixed_ms;
  e.body = std::to_string(i);
  e.body.resize(300, 'x');
  return e;
}

// -- appends ------------------------------------------------------------------

/// `n` events in batches of `batch`, as the event log gets them.
std::vector<std::vector<event>> make_batches(size_t n, size_t batch) {
  std::vector<std::vector<event>> batches;
  for (size_t i = 0; i < n; i += batch) {
    batches.emplace_back();
    for (size_t j = i; j < std::min(n, i + batch); ++j)
      batches.back().push_back(bench_event(j));
  }
  return batches;
}

/// The records the event log writes for the same `n` events (seq set,
/// encoded), for the raw writer.
std::vector<std::string> raw_values(size_t n) {
  std::vector<std::string> values;
  values.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    auto e = bench_event(i);
    e.seq = i + 1;
    values.push_back(eat::wire::encode(e));
  }
  return values;
}

/// Seconds spent by each writer of append_seconds.
struct append_times {
  double log_s = 0;
  double raw_s = 0;
};

/// Appends the same `n` events with the event log (a new store in `log_dir`)
/// and with raw LMDB (`raw_dir`), `batch` per transaction. The two writers
/// take turns transaction by transaction, and which goes first alternates,
/// so that both meet the same disk conditions.
append_times append_seconds(
  const fs::path& log_dir, const fs::path& raw_dir, size_t n, size_t batch) {
  auto batches = make_batches(n, batch);
  auto values = raw_values(n);
  auto s = must(store::open(log_dir), "store::open");
  event_log log{*s};
  raw_env env{raw_dir};
  append_times t;
  for (size_t b = 0; b < batches.size(); ++b) {
    auto log_turn = [&] {
      stopwatch sw;
      if (batch == 1)
        must(log.append(std::move(batches[b].front())), "append");
      else
        must(log.append_batch(std::move(batches[b])), "append_batch");
      t.log_s += sw.seconds();
    };
    auto raw_turn = [&] {
      stopwatch sw;
      env.append(values, b * batch, std::min(n, (b + 1) * batch));
      t.raw_s += sw.seconds();
    };
    if (b % 2 == 0) {
      log_turn();
      raw_turn();
    } else {
      raw_turn();
      log_turn();
    }
  }
  return t;
}

/// Runs append_seconds `rounds` times (fresh stores) and prints the best
/// rate of each writer and the ratio of their best times.
void append_figures(tally& score, const fs::path& dir, const std::string& name,
  size_t n, size_t batch, int rounds) {
  append_times best{1e300, 1e300};
  for (int r = 0; r < rounds; ++r) {
    auto round = "-" + std::to_string(r);
    auto t = append_seconds(
      dir / (name + "-log" + round), dir / (name + "-raw" + round), n, batch);
    best.log_s = std::min(best.log_s, t.log_s);
    best.raw_s = std::min(best.raw_s, t.raw_s);
  }
  double floor = batch == 1 ? 100 : 100'000;
  auto rate = n / best.log_s;
  score.add(print_figure("events appended/s, " + name, rate, "/s",
    ">= " + std::to_string(static_cast<int>(floor)) + " /s", rate >= floor));
  print_figure("  raw LMDB puts/s, " + name, n / best.raw_s, "/s", "-", true);
  auto ratio = best.log_s / best.raw_s;
  score.add(print_figure("  overhead event_log / raw, " + name, ratio, "x",
    "<= 1.5 x", ratio <= 1.5));
}

// -- reads --------------------------------------------------------------------

/// Reads the whole log of the store in `dir` in pages; returns the events.
std::vector<event> read_all(const fs::path& dir, size_t page, size_t expected) {
  auto s = must(store::open(dir), "store::open");
  event_log log{*s};
  std::vector<event> all;
  all.reserve(expected);
  for (uint64_t from = 1;;) {
    auto got = must(log.read(from, page), "read");
    if (got.empty())
      break;
    from = got.back().seq + 1;
    for (auto& e : got)
      all.push_back(std::move(e));
  }
  if (all.size() != expected)
    throw std::runtime_error("read " + std::to_string(all.size())
                             + " events, expected " + std::to_string(expected));
  return all;
}

void read_figure(tally& score, const fs::path& dir, const counts& c) {
  stopwatch sw;
  auto events = read_all(dir, c.read_page, c.batched_appends);
  auto rate = events.size() / sw.seconds();
  score.add(
    print_figure("events read/s (pages of " + std::to_string(c.read_page) + ")",
      rate, "/s", ">= 500000 /s", rate >= 500'000));
}

// -- rebuild ------------------------------------------------------------------

/// "1.23 s (CPU 1.01 s)".
std::string seconds_text(double wall, double cpu) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f s (CPU %.2f s)", wall, cpu);
  return buf;
}

void rebuild_figure(tally& score, const fs::path& dir, const counts& c) {
  {
    stopwatch sw;
    auto s = must(store::open(dir), "store::open");
    event_log log{*s};
    eat::bench::synthetic_run run{c.rebuild_events};
    for (auto batch = run.next(10'000); !batch.empty();
         batch = run.next(10'000))
      must(log.append_batch(std::move(batch)), "append_batch");
    print_note(
      "(wrote a realistic log of " + std::to_string(run.made()) + " events, "
      + std::to_string(fs::file_size(dir / "data.mdb") >> 20) + " MiB, in "
      + seconds_text(sw.seconds(), sw.cpu_seconds()) + ")");
  }
  stopwatch sw;
  auto events = read_all(dir, c.read_page, c.rebuild_events);
  auto read_s = sw.seconds();
  auto read_cpu = sw.cpu_seconds();
  auto h = must(eat::rebuild(events), "rebuild");
  auto total = sw.seconds();
  auto total_cpu = sw.cpu_seconds();
  auto pairs = (c.rebuild_events - 5) / 2;
  if (h.evaluations != pairs || h.last_seq != c.rebuild_events)
    throw std::runtime_error(
      "rebuilt state has " + std::to_string(h.evaluations)
      + " evaluations, expected " + std::to_string(pairs));
  score.add(print_figure("rebuild from " + std::to_string(c.rebuild_events)
                           + " events (read + apply)",
    total, "s", "< 5 s", total < 5));
  print_note("read " + seconds_text(read_s, read_cpu) + ", apply "
             + seconds_text(total - read_s, total_cpu - read_cpu) + "; "
             + std::to_string(h.candidates.size()) + " candidates, "
             + std::to_string(h.passed) + " passed");
}

// -- file tree ----------------------------------------------------------------

/// The path and bytes of the i-th small file: kernels and build logs of
/// candidates (build logs are often identical, so their blob is shared).
std::pair<std::string, std::string> small_file(size_t i) {
  auto dir = "/teams/t" + std::to_string(i / 2 % 8) + "/candidates/c"
             + std::to_string(i / 2);
  if (i % 2 == 1)
    return {dir + "/build.log", "g++ -O3: ok, 0 warnings\n"};
  auto bytes = "// kernel " + std::to_string(i / 2) + "\n";
  bytes.resize(700, '.');
  return {dir + "/kernel.cpp", bytes};
}

void tree_figures(tally& score, const fs::path& dir, const counts& c) {
  auto s = must(store::open(dir), "store::open");
  file_tree tree{*s};
  stopwatch single;
  for (size_t i = 0; i < c.single_puts; ++i) {
    auto [path, bytes] = small_file(i);
    must(tree.put(path, bytes, "bench"), "file_tree::put");
  }
  auto single_rate = c.single_puts / single.seconds();
  score.add(print_figure("file-tree puts/s, one transaction each", single_rate,
    "/s", ">= 100 /s", single_rate >= 100));
  stopwatch batched;
  for (size_t i = c.single_puts; i < c.single_puts + c.batched_puts;
       i += c.batch) {
    must(s->update([&](txn& t) -> caf::expected<void> {
      auto end = std::min(i + c.batch, c.single_puts + c.batched_puts);
      for (size_t j = i; j < end; ++j) {
        auto [path, bytes] = small_file(j);
        if (auto v = tree.put_in(t, path, bytes, "bench"); !v)
          return v.error();
      }
      return caf::unit;
    }),
      "file_tree::put_in");
  }
  auto batched_rate = c.batched_puts / batched.seconds();
  score.add(
    print_figure("file-tree puts/s, batches of " + std::to_string(c.batch),
      batched_rate, "/s", ">= 10000 /s", batched_rate >= 10'000));
}

// -- main ---------------------------------------------------------------------

std::string cpu_model() {
  std::ifstream in{"/proc/cpuinfo"};
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

/// The first three fields of /proc/loadavg.
std::string load_average() {
  std::ifstream in{"/proc/loadavg"};
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

void print_machine(bool quick) {
  auto now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
  std::printf("eat store_bench, %s, %s, %u hardware threads%s\n", date,
    cpu_model().c_str(), std::thread::hardware_concurrency(),
    quick ? " (--quick: counts / 10)" : "");
  std::printf("scratch directory under %s; load average %s\n\n",
    fs::temp_directory_path().c_str(), load_average().c_str());
}

int run(bool quick) {
  counts c;
  if (quick) {
    c.single_appends /= 10;
    c.batched_appends /= 10;
    c.rebuild_events /= 10;
    c.single_puts /= 10;
    c.batched_puts /= 10;
  }
  print_machine(quick);
  eat::bench::scratch_dir tmp;
  eat::bench::print_header();
  tally score;
  append_figures(score, tmp.path(), "single", c.single_appends, 1, 1);
  append_figures(score, tmp.path(), "batched", c.batched_appends, c.batch, 3);
  read_figure(score, tmp.path() / "batched-log-0", c);
  rebuild_figure(score, tmp.path() / "rebuild", c);
  tree_figures(score, tmp.path() / "files", c);
  std::printf("\n%d of %d figures meet their target; load average %s\n",
    score.met, score.figures, load_average().c_str());
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::string_view{argv[1]} == "--quick";
  try {
    return run(quick);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "store_bench: %s\n", ex.what());
    return 1;
  }
}
