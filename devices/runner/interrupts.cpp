#include "devices/runner/interrupts.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace eat::devices {

namespace {

/// Reads all of `fd` into `text` from offset 0; false on an error.
bool read_whole(int fd, std::string& text) {
  text.clear();
  char buf[16384];
  for (off_t at = 0;;) {
    auto n = ::pread(fd, buf, sizeof(buf), at);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    if (n == 0)
      return true;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
}

/// The next whitespace-separated word of `line` from `at`, moving `at`.
std::string_view next_word(std::string_view line, size_t& at) {
  while (at < line.size() && (line[at] == ' ' || line[at] == '\t'))
    ++at;
  auto from = at;
  while (at < line.size() && line[at] != ' ' && line[at] != '\t')
    ++at;
  return line.substr(from, at - from);
}

/// Whether `word` is a count: 1 to 18 digits (the kernel's are 32-bit;
/// more would overflow the sum).
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

/// The header line's CPU columns, and which is CPU `core`'s (-1: none).
struct columns {
  int count = 0;
  int core = -1;
};

columns columns_of(std::string_view header, int32_t core) {
  auto name = "CPU" + std::to_string(core);
  columns result;
  size_t at = 0;
  for (auto word = next_word(header, at); !word.empty();
       word = next_word(header, at), ++result.count)
    if (word == name)
      result.core = result.count;
  return result;
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

interrupt_counter::interrupt_counter(interrupt_counter&& other) noexcept
  : fd_(other.fd_), core_(other.core_), read_ns_(other.read_ns_),
    why_not_(std::move(other.why_not_)) {
  other.fd_ = -1;
}

interrupt_counter& interrupt_counter::operator=(
  interrupt_counter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = other.fd_;
    core_ = other.core_;
    read_ns_ = other.read_ns_;
    why_not_ = std::move(other.why_not_);
    other.fd_ = -1;
  }
  return *this;
}

interrupt_counter::~interrupt_counter() {
  if (fd_ >= 0)
    ::close(fd_);
}

interrupt_counter interrupt_counter::of_core(
  int32_t core, const std::string& path) {
  interrupt_counter c;
  c.core_ = core;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    c.why_not_ = "cannot open " + path + ": " + std::strerror(errno);
    return c;
  }
  c.fd_ = fd;
  std::vector<int64_t> took;
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto n = c.read();
    took.push_back(ns_since(t0));
    if (n < 0) {
      c.why_not_ = path + " has no count for CPU " + std::to_string(core);
      ::close(c.fd_);
      c.fd_ = -1;
      return c;
    }
  }
  std::sort(took.begin(), took.end());
  c.read_ns_ = took[took.size() / 2];
  return c;
}

int64_t interrupt_counter::read() const {
  if (fd_ < 0 || !read_whole(fd_, text_))
    return -1;
  return parse_interrupts(text_, core_);
}

int64_t parse_interrupts(std::string_view text, int32_t core) {
  auto eol = text.find('\n');
  auto cpus = columns_of(text.substr(0, eol), core);
  if (cpus.core < 0)
    return -1;
  int64_t sum = 0;
  while (eol != std::string_view::npos) {
    auto from = eol + 1;
    eol = text.find('\n', from);
    auto line = text.substr(from,
      eol == std::string_view::npos ? std::string_view::npos : eol - from);
    size_t at = 0;
    auto label = next_word(line, at);
    if (label.empty() || label.back() != ':' || label == "LOC:")
      continue;
    // The counts come first, one per CPU; a line with fewer (ERR, MIS:
    // one for the machine) has none for this core.
    int64_t mine = 0;
    int i = 0;
    for (; i < cpus.count; ++i) {
      auto word = next_word(line, at);
      if (!is_count(word))
        break;
      if (i == cpus.core)
        mine = count_of(word);
    }
    if (i == cpus.count)
      sum += mine;
  }
  return sum;
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
         + std::to_string(core) + ", its timer's left out) in "
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
}

void interrupt_watch::add(int64_t baseline, int64_t baseline_ns,
  int64_t candidate, int64_t candidate_ns) {
  if (!counting() || baseline < 0 || candidate < 0)
    return;
  tally_.baseline += baseline;
  tally_.baseline_ns += baseline_ns;
  tally_.candidate += candidate;
  tally_.candidate_ns += candidate_ns;
  ++tally_.rounds;
  baseline_calls_.push_back({baseline, baseline_ns});
}

interrupt_tally interrupt_watch::finish(int64_t now_ns) {
  if (!counting())
    return {};
  auto end = counter_->read();
  if (end < start_)
    return {};
  tally_.all = end - start_;
  tally_.all_ns = now_ns - start_ns_;
  if (tally_.candidate_ns > 0) {
    auto per_ns = poisson_upper_bound(tally_.candidate)
                  / static_cast<double>(tally_.candidate_ns);
    tally_.rate_bound_per_ms = per_ns * 1e6;
    for (const auto& c : baseline_calls_)
      if (c.count > poisson_three_quarters(per_ns * static_cast<double>(c.ns)))
        ++tally_.baseline_above;
  }
  return tally_;
}

} // namespace eat::devices
