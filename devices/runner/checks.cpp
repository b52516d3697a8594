#include "devices/runner/checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <sys/wait.h>

namespace eat::devices {

namespace {

float poison_value() {
  float x;
  std::memcpy(&x, &poison_bits, sizeof(x));
  return x;
}

template<class Expected>
comparison compare_impl(const float* got, const Expected* expected, size_t n,
  double atol, double rtol) {
  comparison result;
  auto fail = [&](size_t i, double tolerance, const char* reason) {
    if (!result.ok)
      return;
    result.ok = false;
    result.index = i;
    result.got = got[i];
    result.expected = static_cast<double>(expected[i]);
    result.tolerance = tolerance;
    result.reason = reason;
  };
  bool all_zero = true;
  bool reference_zero = true;
  for (size_t i = 0; i < n; ++i) {
    double g = got[i];
    double e = static_cast<double>(expected[i]);
    all_zero = all_zero && g == 0;
    reference_zero = reference_zero && e == 0;
    if (!std::isfinite(e)) {
      // Where the reference is not finite, only a non-finite value matches.
      if (std::isfinite(g))
        fail(i, 0, "mismatch");
      continue;
    }
    auto tolerance = atol + rtol * std::fabs(e);
    if (!std::isfinite(g)) {
      fail(i, tolerance, "non-finite value");
      continue;
    }
    auto err = std::fabs(g - e);
    result.max_abs_error = std::max(result.max_abs_error, err);
    if (!(err <= tolerance))
      fail(i, tolerance, "mismatch");
  }
  if (result.ok && n > 0 && all_zero && !reference_zero) {
    auto nonzero
      = static_cast<size_t>(std::find_if(expected, expected + n, [](auto x) {
          return x != 0;
        }) - expected);
    fail(nonzero, 0, "all zeros");
  }
  return result;
}

} // namespace

guarded_output::guarded_output(size_t n) : storage_(n + 2 * zone), n_(n) {
  poison();
}

void guarded_output::poison() {
  std::fill(storage_.begin(), storage_.end(), poison_value());
}

void guarded_output::poison_data() {
  std::fill(data(), data() + n_, poison_value());
}

bool guarded_output::zones_intact() const {
  auto intact = [](const float* p) {
    for (size_t i = 0; i < zone; ++i) {
      uint32_t bits;
      std::memcpy(&bits, p + i, sizeof(bits));
      if (bits != poison_bits)
        return false;
    }
    return true;
  };
  return intact(storage_.data()) && intact(storage_.data() + zone + n_);
}

comparison compare_outputs(const float* got, const double* expected, size_t n,
  double atol, double rtol) {
  return compare_impl(got, expected, n, atol, rtol);
}

comparison compare_outputs(
  const float* got, const float* expected, size_t n, double atol, double rtol) {
  return compare_impl(got, expected, n, atol, rtol);
}

std::string describe(const comparison& x, const std::string& element) {
  char buf[256];
  if (x.reason == "all zeros")
    std::snprintf(buf, sizeof(buf),
      "the output is all zeros but the reference is not (%s = %.9g)",
      element.c_str(), x.expected);
  else
    std::snprintf(buf, sizeof(buf),
      "%s = %.9g but expected %.9g (|error| %.3g > tolerance %.3g)",
      element.c_str(), x.got, x.expected, std::fabs(x.got - x.expected),
      x.tolerance);
  return buf;
}

uint64_t hash_buffers(const std::vector<std::vector<float>>& buffers) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& buf : buffers) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(buf.data());
    auto size = buf.size() * sizeof(float);
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      uint64_t word;
      std::memcpy(&word, bytes + i, 8);
      h = (h ^ word) * 0x100000001b3ull;
      h ^= h >> 29;
    }
    for (; i < size; ++i)
      h = (h ^ bytes[i]) * 0x100000001b3ull;
    h = (h ^ size) * 0x100000001b3ull;
  }
  return h;
}

size_t first_bitwise_difference(const float* x, const float* y, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(x + i, y + i, sizeof(float)) != 0)
      return i;
  return n;
}

size_t thread_count() {
  std::error_code ec;
  size_t n = 0;
  for (std::filesystem::directory_iterator it{"/proc/self/task", ec}, end;
       !ec && it != end; it.increment(ec))
    ++n;
  return n;
}

bool has_child_processes() {
  siginfo_t info{};
  return ::waitid(P_ALL, 0, &info, WEXITED | WSTOPPED | WCONTINUED | WNOHANG
                                     | WNOWAIT)
         == 0;
}

bool shows_hidden_threads(int64_t cpu_ns, int64_t wall_ns, uint64_t calls) {
  auto slack = 2e6 + 2e4 * static_cast<double>(calls);
  return static_cast<double>(cpu_ns)
         > 1.5 * static_cast<double>(wall_ns) + slack;
}

} // namespace eat::devices
