#include "devices/runner/interrupts.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace eat::devices {

namespace {

/// Room for a per_cpu_count file: a count for each possible CPU.
constexpr size_t count_file_bytes = 1 << 16;

/// A buffer of count_file_bytes for the thread's reads, made at its first
/// (when a counter opens): reading allocates nothing afterwards, since a
/// kernel in the runner's process that takes its memory from the heap on
/// every call would take page faults in its calls where the harness's
/// heap grew between them (tests/devices/kernel_processes_test.cpp).
char* count_buffer() {
  static thread_local std::vector<char> buf(count_file_bytes);
  return buf.data();
}

/// The text of `fd` from offset 0 (at most count_file_bytes); "" on an
/// error.
std::string_view read_text(int fd, char* buf) {
  for (;;) {
    auto n = ::pread(fd, buf, count_file_bytes, 0);
    if (n >= 0)
      return {buf, static_cast<size_t>(n)};
    if (errno != EINTR)
      return {};
  }
}

/// Whether `word` is a count: 1 to 18 digits (more would overflow).
bool is_count(std::string_view word) {
  return !word.empty() && word.size() <= 18
         && std::all_of(word.begin(), word.end(), [](char c) {
              return c >= '0' && c <= '9';
            });
}

int64_t count_of(std::string_view word) {
  int64_t n = 0;
  for (char c : word)
    n = n * 10 + (c - '0');
  return n;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty()
         && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t'))
    text.remove_suffix(1);
  return text;
}

int64_t ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::steady_clock::now() - t0)
    .count();
}

std::string ms_text(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

} // namespace

bool cpu_list_has(std::string_view list, int32_t core) {
  list = trimmed(list);
  while (!list.empty()) {
    auto comma = list.find(',');
    auto item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{}
                                           : list.substr(comma + 1);
    auto dash = item.find('-');
    auto first = item.substr(0, dash);
    auto last = dash == std::string_view::npos ? first : item.substr(dash + 1);
    if (is_count(first) && is_count(last) && count_of(first) <= core
        && core <= count_of(last))
      return true;
  }
  return false;
}

int64_t per_cpu_count_of(std::string_view text, int32_t core) {
  text = trimmed(text);
  for (int32_t i = 0; core >= 0; ++i) {
    auto comma = text.find(',');
    auto word = text.substr(0, comma);
    if (i == core)
      return is_count(word) ? count_of(word) : -1;
    if (comma == std::string_view::npos)
      return -1;
    text = text.substr(comma + 1);
  }
  return -1;
}

interrupt_counter::interrupt_counter(interrupt_counter&& other) noexcept
  : open_(other.open_), fds_(std::move(other.fds_)),
    sources_(std::move(other.sources_)), all_(std::move(other.all_)),
    sys_dir_(std::move(other.sys_dir_)), proc_dir_(std::move(other.proc_dir_)),
    core_(other.core_), read_ns_(other.read_ns_),
    why_not_(std::move(other.why_not_)) {
  other.open_ = false;
  other.fds_.clear();
}

interrupt_counter& interrupt_counter::operator=(
  interrupt_counter&& other) noexcept {
  if (this != &other) {
    for (int fd : fds_)
      ::close(fd);
    open_ = other.open_;
    fds_ = std::move(other.fds_);
    sources_ = std::move(other.sources_);
    all_ = std::move(other.all_);
    sys_dir_ = std::move(other.sys_dir_);
    proc_dir_ = std::move(other.proc_dir_);
    core_ = other.core_;
    read_ns_ = other.read_ns_;
    why_not_ = std::move(other.why_not_);
    other.open_ = false;
    other.fds_.clear();
  }
  return *this;
}

interrupt_counter::~interrupt_counter() {
  for (int fd : fds_)
    ::close(fd);
}

namespace {

/// The interrupts listed in `sys_dir`, in order; `why` says why not.
std::vector<int> listed_interrupts(
  const std::string& sys_dir, std::string& why) {
  std::vector<int> numbers;
  DIR* dir = ::opendir(sys_dir.c_str());
  if (dir == nullptr) {
    why = "cannot list " + sys_dir + ": " + std::strerror(errno);
    return numbers;
  }
  while (auto* entry = ::readdir(dir))
    if (std::string_view name{entry->d_name}; is_count(name))
      numbers.push_back(static_cast<int>(count_of(name)));
  ::closedir(dir);
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

/// Calls `f(n)` for each interrupt `n` listed in `sys_dir` now, reading
/// the folder into a buffer on the stack: allocates nothing. False where
/// the folder cannot be read, after calling `f` for none or some.
template<class F>
bool for_each_listed(const std::string& sys_dir, F f) {
  int fd = ::open(sys_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return false;
  alignas(dirent64) char buf[4096];
  ssize_t got = 0;
  while ((got = ::getdents64(fd, buf, sizeof(buf))) > 0)
    for (ssize_t at = 0; at < got;) {
      const auto* entry = reinterpret_cast<const dirent64*>(buf + at);
      at += entry->d_reclen;
      if (std::string_view name{entry->d_name}; is_count(name))
        f(static_cast<int>(count_of(name)));
    }
  ::close(fd);
  return got == 0;
}

/// Whether `sys_dir` lists exactly the interrupts in `sorted` now (true
/// where it cannot be read: nothing to go by); allocates nothing.
bool listed_exactly(
  const std::string& sys_dir, const std::vector<int>& sorted) {
  size_t listed = 0;
  bool known = true;
  auto read = for_each_listed(sys_dir, [&](int n) {
    ++listed;
    known = known && std::binary_search(sorted.begin(), sorted.end(), n);
  });
  return !read || (known && listed == sorted.size());
}

/// The path `dir`/`n`/`file` in `path` (PATH_MAX bytes), built without
/// allocating; false where it does not fit.
bool irq_path(char* path, const std::string& dir, int n, const char* file) {
  auto len = std::snprintf(path, PATH_MAX, "%s/%d/%s", dir.c_str(), n, file);
  return len > 0 && len < PATH_MAX;
}

/// Whether interrupt `n`'s affinity in `proc_dir` holds `core` (false
/// where neither affinity file can be read); allocates nothing.
bool routed_to(const std::string& proc_dir, int n, int32_t core) {
  char path[PATH_MAX];
  for (const char* file : {"effective_affinity_list", "smp_affinity_list"}) {
    if (!irq_path(path, proc_dir, n, file))
      return false;
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      continue;
    auto text = read_text(fd, count_buffer());
    ::close(fd);
    return cpu_list_has(text, core);
  }
  return false;
}

/// `core`'s count in interrupt `n`'s per_cpu_count file in `sys_dir`, or
/// -1; allocates nothing.
int64_t count_at(const std::string& sys_dir, int n, int32_t core) {
  char path[PATH_MAX];
  if (!irq_path(path, sys_dir, n, "per_cpu_count"))
    return -1;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  auto count = per_cpu_count_of(read_text(fd, count_buffer()), core);
  ::close(fd);
  return count;
}

/// The per_cpu_count files, open, of the interrupts of `all` routed to
/// `core` now, in order; or, in `failed`, the file that could not be
/// opened and why (those opened before closed again).
struct routed_files {
  std::vector<int> fds;
  std::vector<int> numbers;
  std::string failed;
};

routed_files open_routed(const std::string& sys_dir,
  const std::string& proc_dir, const std::vector<int>& all, int32_t core) {
  routed_files out;
  for (int n : all) {
    if (!routed_to(proc_dir, n, core))
      continue;
    auto path = sys_dir + "/" + std::to_string(n) + "/per_cpu_count";
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      out.failed = path + ": " + std::strerror(errno);
      for (int opened : out.fds)
        ::close(opened);
      out.fds.clear();
      out.numbers.clear();
      return out;
    }
    out.fds.push_back(fd);
    out.numbers.push_back(n);
  }
  return out;
}

} // namespace

interrupt_counter interrupt_counter::of_core(
  int32_t core, const std::string& sys_dir, const std::string& proc_dir) {
  interrupt_counter c;
  c.core_ = core;
  c.sys_dir_ = sys_dir;
  c.proc_dir_ = proc_dir;
  c.all_ = listed_interrupts(sys_dir, c.why_not_);
  if (!c.why_not_.empty())
    return c;
  auto routed = open_routed(sys_dir, proc_dir, c.all_, core);
  if (!routed.failed.empty()) {
    c.why_not_ = "cannot open " + routed.failed;
    return c;
  }
  c.fds_ = std::move(routed.fds);
  c.sources_ = std::move(routed.numbers);
  c.open_ = true;
  c.read_ns_ = c.measured_read_ns();
  if (c.read_ns_ < 0) {
    c.why_not_ = "no count for CPU " + std::to_string(core) + " in " + sys_dir
                 + "/<n>/per_cpu_count";
    c.open_ = false;
  }
  return c;
}

int64_t interrupt_counter::measured_read_ns() const {
  std::vector<int64_t> took;
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    if (read() < 0)
      return -1;
    took.push_back(ns_since(t0));
  }
  std::sort(took.begin(), took.end());
  return took[took.size() / 2];
}

int64_t interrupt_counter::read() const {
  if (!open_)
    return -1;
  int64_t sum = 0;
  for (int fd : fds_) {
    auto n = per_cpu_count_of(read_text(fd, count_buffer()), core_);
    if (n < 0)
      return -1;
    sum += n;
  }
  return sum;
}

int64_t interrupt_counter::read_others() const {
  if (!open_)
    return -1;
  // Every interrupt listed now but those read: with those that appeared
  // since the counter opened or last refreshed (hotplug; an interrupt's
  // count starts at 0 when it appears), which all_ does not hold yet.
  int64_t sum = 0;
  auto add = [&](int n) {
    if (!reads(n))
      sum += std::max<int64_t>(0, count_at(sys_dir_, n, core_));
  };
  if (for_each_listed(sys_dir_, add))
    return sum;
  sum = 0;
  std::for_each(all_.begin(), all_.end(), add);
  return sum;
}

bool interrupt_counter::reads(int n) const {
  return std::binary_search(sources_.begin(), sources_.end(), n);
}

bool interrupt_counter::refresh() {
  if (!open_)
    return false;
  // Compared first without allocating (see count_buffer): the interrupts
  // listed, then their routes.
  auto routed_now = [&](int n) {
    return routed_to(proc_dir_, n, core_);
  };
  bool same_list = listed_exactly(sys_dir_, all_);
  if (same_list && std::all_of(all_.begin(), all_.end(), [&](int n) {
        return reads(n) == routed_now(n);
      }))
    return false;
  if (!same_list) {
    std::string why;
    if (auto listed = listed_interrupts(sys_dir_, why); why.empty())
      all_ = std::move(listed);
  }
  auto routed = open_routed(sys_dir_, proc_dir_, all_, core_);
  if (!routed.failed.empty())
    return false;
  for (int fd : fds_)
    ::close(fd);
  fds_ = std::move(routed.fds);
  sources_ = std::move(routed.numbers);
  if (auto ns = measured_read_ns(); ns >= 0)
    read_ns_ = ns;
  return true;
}

double watched_fraction(int64_t call_ns, int64_t read_ns) {
  if (read_ns <= 0)
    return 1;
  return std::clamp(
    static_cast<double>(call_ns) / (20.0 * static_cast<double>(read_ns)), 0.0,
    1.0);
}

double log_tail_bound(double n, double k, double p) {
  if (n <= 0 || k <= 0 || k <= p * n)
    return 0;
  if (p <= 0)
    return -INFINITY;
  auto a = std::min(1.0, k / n);
  auto kl = a * std::log(a / p);
  if (a < 1)
    kl += (1 - a) * std::log((1 - a) / (1 - p));
  return -n * kl;
}

double poisson_upper_bound(int64_t count) {
  // P(X <= c) <= exp(-m) (e m / c)^c for a mean m above c; find the m at
  // which that falls to 10^-10.
  const double c = static_cast<double>(std::max<int64_t>(0, count));
  const double target = std::log(1e-10);
  auto log_bound = [&](double m) {
    return c == 0 ? -m : -m + c + c * std::log(m / c);
  };
  double lo = std::max(c, 1e-9);
  double hi = lo + 30;
  while (log_bound(hi) > target)
    hi *= 2;
  for (int i = 0; i < 60; ++i) {
    auto mid = (lo + hi) / 2;
    (log_bound(mid) > target ? lo : hi) = mid;
  }
  return hi;
}

int64_t poisson_three_quarters(double mean) {
  if (mean <= 0)
    return 0;
  // Sum the probabilities in log space (exp(-mean) underflows past ~700).
  double log_p = -mean;
  double below = 0; // P(X <= q) so far
  int64_t q = 0;
  const auto last = static_cast<int64_t>(mean + 20 * std::sqrt(mean) + 20);
  for (; q < last; ++q) {
    below += std::exp(log_p);
    if (below >= 0.75)
      return q;
    log_p += std::log(mean) - std::log(static_cast<double>(q + 1));
  }
  return q;
}

std::string aimed_interrupts_text(const interrupt_tally& t, int32_t core) {
  if (t.rounds == 0 || t.baseline_ns <= 0 || t.candidate_ns <= 0)
    return {};
  auto baseline_ns = static_cast<double>(t.baseline_ns);
  auto candidate_ns = static_cast<double>(t.candidate_ns);
  // What the baseline's calls had above the candidate's rate.
  auto above = static_cast<double>(t.baseline)
               - static_cast<double>(t.candidate) * baseline_ns / candidate_ns;
  auto rounds = static_cast<double>(t.rounds);
  if (above < 0.25 * rounds
      || log_tail_bound(rounds, static_cast<double>(t.baseline_above), 0.25)
           > std::log(1e-9))
    return {};
  char figures[200];
  std::snprintf(figures, sizeof(figures),
    "%.2f an ms against %.2f; at %.2f an ms, the most the candidate's count "
    "allows, %llu of the %llu watched calls of the baseline's had more than "
    "three in four such calls would",
    static_cast<double>(t.baseline) / baseline_ns * 1e6,
    static_cast<double>(t.candidate) / candidate_ns * 1e6, t.rate_bound_per_ms,
    static_cast<unsigned long long>(t.baseline_above),
    static_cast<unsigned long long>(t.rounds));
  return "interrupts aimed at the baseline's calls: "
         + std::to_string(t.baseline) + " on the device's core (CPU "
         + std::to_string(core) + ", device interrupts) in "
         + ms_text(t.baseline_ns) + " of the baseline's timed calls and "
         + std::to_string(t.candidate) + " in " + ms_text(t.candidate_ns)
         + " of the candidate's, over " + std::to_string(t.rounds)
         + " watched rounds: " + figures
         + " (chance gives so many less than once in 10^9). Something timed "
           "disk or network I/O, whose completions interrupt the core, to "
           "the baseline's calls; move the devices' interrupts off the "
           "core (/proc/irq/*/smp_affinity_list)";
}

void interrupt_watch::start(int64_t now_ns) {
  if (counter_ == nullptr)
    return;
  start_ = counter_->read();
  start_ns_ = now_ns;
  others_start_ = counter_->read_others();
}

void interrupt_watch::add(
  size_t round, const counted_call& baseline, const counted_call& candidate) {
  if (!counting() || baseline.count < 0 || candidate.count < 0)
    return;
  tally_.baseline += baseline.count;
  tally_.baseline_ns += baseline.window_ns;
  tally_.candidate += candidate.count;
  tally_.candidate_ns += candidate.window_ns;
  ++tally_.rounds;
  rounds_.push_back({round, baseline, candidate});
}

interrupt_tally interrupt_watch::finish(int64_t now_ns) {
  if (!counting())
    return {};
  auto end = counter_->read();
  if (end < start_)
    return {};
  tally_.all = end - start_;
  tally_.all_ns = now_ns - start_ns_;
  if (auto others = counter_->read_others();
      others_start_ >= 0 && others >= others_start_)
    tally_.unwatched = others - others_start_;
  if (tally_.candidate_ns > 0) {
    auto per_ns = rate_margin * poisson_upper_bound(tally_.candidate)
                  / static_cast<double>(tally_.candidate_ns);
    tally_.rate_bound_per_ms = per_ns * 1e6;
    for (const auto& r : rounds_)
      if (r.baseline.count > poisson_three_quarters(
            per_ns * static_cast<double>(r.baseline.window_ns)))
        ++tally_.baseline_above;
  }
  return tally_;
}

double interrupt_watch::probe_cost(interrupt_tally& tally) const {
  if (counter_ == nullptr || tally.rounds == 0)
    return 0;
  // Fewer than one call in two met an interrupt: neither median moved.
  auto rounds = static_cast<double>(tally.rounds);
  if (static_cast<double>(tally.baseline) < 0.5 * rounds
      && static_cast<double>(tally.candidate) < 0.5 * rounds)
    return 0;
  auto chunks
    = probe_interrupts(*counter_, probe_chunk_ns, probe_interrupt_count,
      std::clamp<int64_t>(tally.all_ns / 50, 5'000'000, 40'000'000));
  for (const auto& c : chunks) {
    tally.probe += std::max<int64_t>(0, c.count);
    tally.probe_ns += c.window_ns;
  }
  tally.cost_ns = interrupt_cost_ns(chunks);
  return tally.cost_ns;
}

void interrupt_watch::take_off(interrupt_tally& tally, double cost_ns,
  std::vector<int64_t>& baseline_ns, std::vector<int64_t>& candidate_ns) const {
  if (tally.rounds == 0 || tally.baseline_ns <= 0 || cost_ns <= 0)
    return;
  const auto cap = rate_margin * static_cast<double>(tally.baseline)
                   / static_cast<double>(tally.baseline_ns);
  for (const auto& r : rounds_) {
    if (r.round >= baseline_ns.size() || r.round >= candidate_ns.size())
      continue;
    auto b = interrupts_time_ns(r.baseline, cost_ns);
    auto c = interrupts_time_ns(r.candidate, cost_ns, cap);
    baseline_ns[r.round] = std::max<int64_t>(1, baseline_ns[r.round] - b);
    candidate_ns[r.round] = std::max<int64_t>(1, candidate_ns[r.round] - c);
    tally.baseline_taken_ns += b;
    tally.candidate_taken_ns += c;
  }
}

bool routed_during_timing(const interrupt_tally& t, size_t rounds) {
  return t.unwatched > 0
         && 2 * static_cast<uint64_t>(t.unwatched)
              >= static_cast<uint64_t>(rounds);
}

workload_report run_with_routes(
  interrupt_counter* counter, const std::function<workload_report(int)>& run) {
  if (counter != nullptr)
    counter->refresh();
  auto report = run(0);
  if (counter == nullptr || report.status != eval_status::passed
      || !routed_during_timing(report.interrupts, report.baseline_ns.size()))
    return report;
  counter->refresh();
  report = run(1);
  report.interrupts.retimed = 1;
  return report;
}

} // namespace eat::devices
