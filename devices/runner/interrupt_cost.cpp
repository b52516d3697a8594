#include "devices/runner/interrupt_cost.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "devices/runner/interrupts.hpp"
#include "devices/stats.hpp"

namespace eat::devices {

namespace {

/// The bins the slopes are taken between: at least this many chunks each
/// (a single chunk that met the only interrupt on a quiet core says
/// nothing of its cost), and at most max_cost_bins bins.
constexpr size_t min_bin_chunks = 5;
constexpr size_t max_cost_bins = 256;

/// Chunks with neighbouring counts: their mean count, the median of their
/// gap times, and how many they are.
struct count_bin {
  double count;
  double median_ns;
  double chunks;
};

/// The gap times grouped by count, the groups, in order, gathered into bins
/// of at least `least` chunks (the last one short of it joins the bin
/// before).
std::vector<count_bin> bins_of(
  const std::map<int64_t, std::vector<double>>& by_count, size_t least) {
  std::vector<count_bin> bins;
  std::vector<double> gaps;
  double counts = 0;
  std::vector<double> last;
  double last_counts = 0;
  auto close = [&] {
    auto n = static_cast<double>(gaps.size());
    bins.push_back({counts / n, median(gaps), n});
    last = std::move(gaps);
    last_counts = counts;
    gaps.clear();
    counts = 0;
  };
  for (const auto& [count, xs] : by_count) {
    gaps.insert(gaps.end(), xs.begin(), xs.end());
    counts += static_cast<double>(count) * static_cast<double>(xs.size());
    if (gaps.size() >= least)
      close();
  }
  if (!gaps.empty() && !bins.empty()) {
    bins.pop_back();
    gaps.insert(gaps.end(), last.begin(), last.end());
    counts += last_counts;
    close();
  }
  return bins;
}

/// The weighted median of the slopes between each pair of `bins`.
double median_slope(const std::vector<count_bin>& bins) {
  struct weighted {
    double slope;
    double weight;
  };
  std::vector<weighted> slopes;
  double total = 0;
  for (size_t i = 0; i < bins.size(); ++i)
    for (size_t j = i + 1; j < bins.size(); ++j) {
      const auto& a = bins[i];
      const auto& b = bins[j];
      auto weight = a.chunks * b.chunks;
      slopes.push_back(
        {(b.median_ns - a.median_ns) / (b.count - a.count), weight});
      total += weight;
    }
  std::sort(
    slopes.begin(), slopes.end(), [](const weighted& a, const weighted& b) {
      return a.slope < b.slope;
    });
  double below = 0;
  for (const auto& s : slopes) {
    below += s.weight;
    if (below >= total / 2)
      return s.slope;
  }
  return 0;
}

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

} // namespace

probe_chunk probe_once(const interrupt_counter& counter, int64_t spin_ns) {
  probe_chunk chunk;
  auto a0 = steady_ns();
  auto n0 = counter.read();
  auto b0 = steady_ns();
  auto last = b0;
  const auto end = b0 + spin_ns;
  while (last < end) {
    auto now = steady_ns();
    if (auto gap = now - last; gap > probe_gap_ns) {
      chunk.gaps_ns += gap;
      chunk.longest_ns = std::max(chunk.longest_ns, gap);
    }
    last = now;
  }
  auto a1 = steady_ns();
  auto n1 = counter.read();
  auto b1 = steady_ns();
  chunk.spin_ns = last - b0;
  chunk.window_ns = (a1 + b1) / 2 - (a0 + b0) / 2;
  chunk.count = n0 >= 0 && n1 >= n0 ? n1 - n0 : -1;
  return chunk;
}

std::vector<probe_chunk> probe_interrupts(const interrupt_counter& counter,
  int64_t spin_ns, int64_t interrupts, int64_t budget_ns) {
  std::vector<probe_chunk> chunks;
  int64_t counted = 0;
  const auto start = steady_ns();
  while (counted < interrupts && steady_ns() - start < budget_ns) {
    chunks.push_back(probe_once(counter, spin_ns));
    if (chunks.back().count < 0)
      break;
    counted += chunks.back().count;
  }
  return chunks;
}

double interrupt_cost_ns(const std::vector<probe_chunk>& chunks) {
  std::map<int64_t, std::vector<double>> by_count;
  std::vector<double> longest_met;
  size_t kept = 0;
  for (const auto& c : chunks) {
    if (c.count < 0 || c.spin_ns <= 0 || c.longest_ns > probe_stall_ns)
      continue;
    by_count[c.count].push_back(static_cast<double>(c.gaps_ns));
    if (c.count > 0)
      longest_met.push_back(static_cast<double>(c.longest_ns));
    ++kept;
  }
  auto bins
    = bins_of(by_count, std::max(min_bin_chunks, kept / max_cost_bins + 1));
  if (bins.size() < 2)
    return 0;
  // An interrupt in the spin skips its clock by at least its cost in one
  // gap: the chunks that met some have their longest gap that long.
  return std::clamp(median_slope(bins), 0.0, median(longest_met));
}

int64_t interrupts_time_ns(
  const counted_call& call, double cost_ns, double cap_per_ns) {
  if (call.count <= 0 || call.window_ns <= 0 || call.sample_ns <= 1
      || cost_ns <= 0)
    return 0;
  auto sample = static_cast<double>(call.sample_ns);
  auto inside = static_cast<double>(call.count)
                * std::min(1.0, sample / static_cast<double>(call.window_ns));
  if (cap_per_ns >= 0)
    inside = std::min(inside, cap_per_ns * sample);
  auto ns = std::llround(inside * cost_ns);
  return std::clamp<int64_t>(ns, 0, call.sample_ns - 1);
}

} // namespace eat::devices
