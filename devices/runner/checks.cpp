#include "devices/runner/checks.hpp"

#include "devices/runner/cgroups.hpp"
#include "devices/runner/pid_namespace.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <optional>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#  include <immintrin.h>
#endif

namespace eat::devices {

namespace {

/// Element access for the comparisons: a dtype'd buffer read as doubles.
struct typed_view {
  dtype type;
  const void* data;

  double operator[](size_t i) const {
    return load_as_double(type, data, i);
  }

  bool poisoned(size_t i) const {
    uint64_t bits = 0;
    std::memcpy(&bits, static_cast<const unsigned char*>(data)
                         + i * size_of(type), size_of(type));
    return bits == poison_pattern(type);
  }
};

/// A float32 buffer read as doubles: the same as typed_view, inlined (a
/// call per element made comparing 60 M elements take 0.25 s).
struct float_view {
  dtype type = dtype::float32;
  const float* data;

  double operator[](size_t i) const {
    return data[i];
  }

  bool poisoned(size_t) const {
    return false; // a float's poison is a NaN, caught as non-finite
  }
};

/// A bfloat16 buffer read as doubles, inlined like float_view.
struct bfloat16_view {
  dtype type = dtype::bfloat16;
  const uint16_t* data;

  double operator[](size_t i) const {
    uint32_t bits = uint32_t{data[i]} << 16;
    float x;
    std::memcpy(&x, &bits, sizeof(x));
    return x;
  }

  bool poisoned(size_t) const {
    return false; // a bfloat16's poison is a NaN, caught as non-finite
  }
};

/// Reference values in double.
struct double_view {
  const double* data;

  double operator[](size_t i) const {
    return data[i];
  }
};

/// What clean_run found in a chunk whose elements all passed.
struct clean_chunk_stats {
  double max_abs = 0;
  double max_rel = 0;
  bool all_zero = true;
  bool reference_zero = true;
};

/// The elements compare_impl judges at a time.
constexpr size_t clean_chunk = 4096;

/// Elements [begin, end) compared without branches: their largest errors
/// if every one is finite, within tolerance and under the maximum error;
/// otherwise nothing, and compare_impl looks at them one by one.
template<class Got, class Expected>
std::optional<clean_chunk_stats> clean_run(const Got& got,
  const Expected& expected, size_t begin, size_t end, const tolerance& tol) {
  clean_chunk_stats r;
  bool ok = true;
  const double max_error
    = tol.max_error > 0 ? tol.max_error : std::numeric_limits<double>::max();
  for (size_t i = begin; i < end; ++i) {
    double g = got[i];
    double e = expected[i];
    double err = std::fabs(g - e);
    double scale = std::fabs(e);
    // NaN anywhere makes both comparisons false; an infinity makes err
    // infinite or NaN.
    ok &= err <= tol.atol + tol.rtol * scale;
    ok &= err <= max_error;
    r.max_abs = std::max(r.max_abs, err);
    r.max_rel = std::max(r.max_rel, e != 0 ? err / scale : 0.0);
    r.all_zero &= g == 0;
    r.reference_zero &= e == 0;
  }
  if (!ok)
    return std::nullopt;
  return r;
}

/// Whether a comparison judges a whole output (and so applies the "all
/// zeros" rule) or a sample of its elements.
enum class scope { whole_output, elements };

template<class Got, class Expected>
comparison compare_impl(const Got& got, const Expected& expected, size_t n,
  const tolerance& tol, scope what = scope::whole_output) {
  comparison result;
  result.compared = n;
  result.required_ratio = tol.matched_ratio < 1 ? tol.matched_ratio : 1;
  auto fail = [&](size_t i, double tolerance, const char* reason) {
    if (!result.ok)
      return;
    result.ok = false;
    result.index = i;
    result.got = got[i];
    result.expected = expected[i];
    result.tolerance = tolerance;
    result.reason = reason;
  };
  // Mismatches fail at once unless the task allows some; then the first one
  // is kept for the message should there be too many.
  auto allowed = tol.allowed_mismatches(n);
  bool count_only = allowed > 0 && what == scope::whole_output;
  bool sampled_ratio = tol.matched_ratio < 1 && what == scope::elements;
  size_t first_mismatch = n;
  double first_mismatch_tolerance = 0;
  bool integers = !is_floating(got.type);
  bool all_zero = true;
  bool reference_zero = true;
  size_t i = 0;
  // A chunk at a time: first without branches, which passes a chunk whose
  // every element is finite and within tolerance; otherwise the chunk again
  // element by element, which finds and names what failed.
  for (size_t end = std::min(n, clean_chunk); i < n;
       end = std::min(n, end + clean_chunk)) {
    if (auto clean = clean_run(got, expected, i, end, tol)) {
      result.max_abs_error = std::max(result.max_abs_error, clean->max_abs);
      result.max_rel_error = std::max(result.max_rel_error, clean->max_rel);
      all_zero = all_zero && clean->all_zero;
      reference_zero = reference_zero && clean->reference_zero;
      i = end;
      continue;
    }
    for (; i < end; ++i) {
      double g = got[i];
      double e = expected[i];
      all_zero = all_zero && g == 0;
      reference_zero = reference_zero && e == 0;
      if (!std::isfinite(e)) {
        // Where the reference is not finite, only a non-finite value matches.
        if (std::isfinite(g))
          fail(i, 0, "mismatch");
        continue;
      }
      auto tolerance = tol.atol + tol.rtol * std::fabs(e);
      if (!std::isfinite(g)) {
        fail(i, tolerance, "non-finite value");
        continue;
      }
      auto err = std::fabs(g - e);
      result.max_abs_error = std::max(result.max_abs_error, err);
      if (e != 0)
        result.max_rel_error
          = std::max(result.max_rel_error, err / std::fabs(e));
      if (tol.max_error > 0 && err > tol.max_error)
        fail(i, tol.max_error, "above the maximum error");
      if (err <= tolerance)
        continue;
      ++result.mismatched;
      if (integers && got.poisoned(i))
        fail(i, tolerance, "not written");
      else if (!count_only && !sampled_ratio)
        fail(i, tolerance, "mismatch");
      else if (first_mismatch == n) {
        first_mismatch = i;
        first_mismatch_tolerance = tolerance;
      }
    }
  }
  if (what == scope::whole_output && result.ok && n > 0 && all_zero
      && !reference_zero) {
    size_t first_nonzero = 0;
    while (expected[first_nonzero] == 0)
      ++first_nonzero;
    fail(first_nonzero, 0, "all zeros");
  }
  if (count_only && result.mismatched > allowed)
    fail(first_mismatch, first_mismatch_tolerance, "too few matched");
  return result;
}

/// 64 bytes of `type`'s poison pattern (every element size divides 64).
struct pattern_block {
  unsigned char bytes[64];

  explicit pattern_block(dtype type) {
    auto pattern = poison_pattern(type);
    auto size = size_of(type);
    for (size_t i = 0; i < sizeof(bytes); i += size)
      std::memcpy(bytes + i, &pattern, size);
  }
};

/// Whole elements of the pattern over `bytes` bytes from `p`, a block at a
/// time (element by element ran at 2 GB/s).
void fill_pattern(unsigned char* p, size_t bytes, dtype type) {
  pattern_block block{type};
  auto whole = bytes / size_of(type) * size_of(type);
  size_t i = 0;
  for (; i + sizeof(block.bytes) <= whole; i += sizeof(block.bytes))
    std::memcpy(p + i, block.bytes, sizeof(block.bytes));
  std::memcpy(p + i, block.bytes, whole - i);
}

/// fill_pattern with non-temporal stores where `p` is 16-byte aligned on
/// x86-64 (every element size divides 16, so the pattern stays in step);
/// the last partial 16 bytes are plain stores.
void stream_pattern(unsigned char* p, size_t bytes, dtype type) {
#if defined(__x86_64__)
  if (reinterpret_cast<uintptr_t>(p) % 16 == 0) {
    pattern_block block{type};
    auto v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block.bytes));
    size_t body = bytes / 16 * 16;
    for (size_t i = 0; i < body; i += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(p + i), v);
    fill_pattern(p + body, bytes - body, type);
    _mm_sfence();
    return;
  }
#endif
  fill_pattern(p, bytes, type);
}

bool holds_pattern(const unsigned char* p, size_t bytes, dtype type) {
  pattern_block block{type};
  auto whole = bytes / size_of(type) * size_of(type);
  size_t i = 0;
  for (; i + sizeof(block.bytes) <= whole; i += sizeof(block.bytes))
    if (std::memcmp(p + i, block.bytes, sizeof(block.bytes)) != 0)
      return false;
  return std::memcmp(p + i, block.bytes, whole - i) == 0;
}

constexpr uint64_t hash_prime = 0x100000001b3ull;

uint64_t hash_step(uint64_t h, uint64_t word) {
  h = (h ^ word) * hash_prime;
  return h ^ (h >> 29);
}

/// Four chains of 8-byte words, word i in chain i % 4, folded together at
/// the end: one chain waits on each multiply (5 GB/s), four overlap.
uint64_t hash_bytes(uint64_t h, const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint64_t lane[4] = {h, h ^ 1, h ^ 2, h ^ 3};
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    uint64_t words[4];
    std::memcpy(words, bytes + i, 32);
    for (int l = 0; l < 4; ++l)
      lane[l] = hash_step(lane[l], words[l]);
  }
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    lane[0] = hash_step(lane[0], word);
  }
  for (; i < size; ++i)
    lane[0] = (lane[0] ^ bytes[i]) * hash_prime;
  for (int l = 1; l < 4; ++l)
    lane[0] = hash_step(lane[0], lane[l]);
  return (lane[0] ^ size) * hash_prime;
}

constexpr uint64_t hash_seed = 0xcbf29ce484222325ull;

} // namespace

guarded_output::guarded_output(dtype type, size_t n)
  : type_(type), n_(n), storage_(n * size_of(type) + 2 * zone_bytes) {
  poison();
}

void guarded_output::poison() {
  fill_pattern(storage_.data(), storage_.size(), type_);
}

void guarded_output::poison_data() {
  stream_pattern(storage_.data() + zone_bytes, n_ * size_of(type_), type_);
}

bool guarded_output::zones_intact() const {
  return holds_pattern(storage_.data(), zone_bytes, type_)
         && holds_pattern(storage_.data() + storage_.size() - zone_bytes,
           zone_bytes, type_);
}

bool guarded_output::poisoned(size_t i) const {
  return typed_view{type_, data()}.poisoned(i);
}

comparison compare_outputs(dtype type, const void* got, const double* expected,
  size_t n, const tolerance& tol) {
  if (type == dtype::float32)
    return compare_impl(float_view{type, static_cast<const float*>(got)},
      double_view{expected}, n, tol);
  if (type == dtype::bfloat16)
    return compare_impl(bfloat16_view{type, static_cast<const uint16_t*>(got)},
      double_view{expected}, n, tol);
  return compare_impl(typed_view{type, got}, double_view{expected}, n, tol);
}

comparison compare_outputs(dtype type, const void* got, const void* expected,
  size_t n, const tolerance& tol) {
  if (type == dtype::float32)
    return compare_impl(float_view{type, static_cast<const float*>(got)},
      float_view{type, static_cast<const float*>(expected)}, n, tol);
  if (type == dtype::bfloat16)
    return compare_impl(bfloat16_view{type, static_cast<const uint16_t*>(got)},
      bfloat16_view{type, static_cast<const uint16_t*>(expected)}, n, tol);
  return compare_impl(
    typed_view{type, got}, typed_view{type, expected}, n, tol);
}

comparison compare_elements(dtype type, const void* got, const void* expected,
  size_t n, const tolerance& tol) {
  return compare_impl(
    typed_view{type, got}, typed_view{type, expected}, n, tol, scope::elements);
}

comparison compare_outputs(
  const float* got, const double* expected, size_t n, const tolerance& tol) {
  return compare_outputs(dtype::float32, got, expected, n, tol);
}

comparison compare_outputs(
  const float* got, const float* expected, size_t n, const tolerance& tol) {
  return compare_outputs(
    dtype::float32, got, static_cast<const void*>(expected), n, tol);
}

std::string describe(const comparison& x, const std::string& element) {
  char buf[512];
  if (x.reason == "all zeros")
    std::snprintf(buf, sizeof(buf),
      "the output is all zeros but the reference is not (%s = %.9g)",
      element.c_str(), x.expected);
  else if (x.reason == "not written")
    std::snprintf(buf, sizeof(buf),
      "%s was not written (it still holds the poison sentinel %.0f) but "
      "expected %.9g",
      element.c_str(), x.got, x.expected);
  else if (x.reason == "above the maximum error")
    std::snprintf(buf, sizeof(buf),
      "%s = %.9g but expected %.9g (|error| %.3g > maximum error %.3g)",
      element.c_str(), x.got, x.expected, std::fabs(x.got - x.expected),
      x.tolerance);
  else if (x.reason == "too few matched")
    std::snprintf(buf, sizeof(buf),
      "too few elements within tolerance: %zu of %zu (%.4g %%) outside it, "
      "a matched ratio of %.4g %% required; the first: %s = %.9g but "
      "expected %.9g (|error| %.3g > tolerance %.3g)",
      x.mismatched, x.compared,
      100.0 * static_cast<double>(x.mismatched)
        / static_cast<double>(x.compared),
      100.0 * x.required_ratio, element.c_str(), x.got, x.expected,
      std::fabs(x.got - x.expected), x.tolerance);
  else
    std::snprintf(buf, sizeof(buf),
      "%s = %.9g but expected %.9g (|error| %.3g > tolerance %.3g)",
      element.c_str(), x.got, x.expected, std::fabs(x.got - x.expected),
      x.tolerance);
  return buf;
}

uint64_t hash_buffers(const std::vector<typed_buffer>& buffers) {
  uint64_t h = hash_seed;
  for (const auto& buf : buffers)
    h = hash_bytes(h, buf.data(), buf.bytes());
  return h;
}

uint64_t hash_buffers(const std::vector<std::vector<float>>& buffers) {
  uint64_t h = hash_seed;
  for (const auto& buf : buffers)
    h = hash_bytes(h, buf.data(), buf.size() * sizeof(float));
  return h;
}

size_t first_bitwise_difference(
  const void* x, const void* y, size_t n, size_t size) {
  const auto* a = static_cast<const unsigned char*>(x);
  const auto* b = static_cast<const unsigned char*>(y);
  // Whole chunks by memcmp; element by element only in a chunk that
  // differs (a memcmp per element ran at 2 GB/s).
  constexpr size_t chunk_elements = 4096;
  for (size_t start = 0; start < n; start += chunk_elements) {
    auto count = std::min(chunk_elements, n - start);
    if (std::memcmp(a + start * size, b + start * size, count * size) == 0)
      continue;
    for (size_t i = start; i < start + count; ++i)
      if (std::memcmp(a + i * size, b + i * size, size) != 0)
        return i;
  }
  return n;
}

size_t first_bitwise_difference(const float* x, const float* y, size_t n) {
  return first_bitwise_difference(x, y, n, sizeof(float));
}

size_t thread_count() {
  std::error_code ec;
  size_t n = 0;
  for (std::filesystem::directory_iterator it{"/proc/self/task", ec}, end;
       !ec && it != end; it.increment(ec))
    ++n;
  return n;
}

bool in_own_pid_namespace() {
  // The namespace's worker is PID 2, the child of its init. No runner
  // outside one is: PID 2 of the first namespace is the kernel's kthreadd,
  // and in a container's the parent at PID 1 would be eat or a test
  // program, whose own threads (CAF's, the compile workers') take the
  // first ids after 1. (/proc/1/ns/pid, the other witness, is unreadable
  // in some VMs.)
  return ::getpid() == 2 && ::getppid() == 1;
}

bool has_child_processes() {
  siginfo_t info{};
  if (::waitid(P_ALL, 0, &info,
        WEXITED | WSTOPPED | WCONTINUED | WNOHANG | WNOWAIT)
      == 0)
    return true;
  // In the runner's own namespace kill(-1, 0) reaches every process there
  // but init and the caller: one is a kernel's process that outlived its
  // parent (setsid and a double fork), which waitid cannot see.
  return in_own_pid_namespace() && (::kill(-1, 0) == 0 || errno == EPERM);
}

namespace {

int64_t rusage_ns(int who) {
  rusage usage{};
  getrusage(who, &usage);
  auto us = (int64_t{usage.ru_utime.tv_sec} + usage.ru_stime.tv_sec) * 1'000'000
            + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
  return us * 1000;
}

/// Where other_cpu_now() reads the evaluation's CPU time: a cgroup's
/// CPU-time file (empty: getrusage instead) and its format.
struct cgroup_cpu_source {
  std::string file;
  bool v2 = false;
};

cgroup_cpu_source& cgroup_source() {
  static cgroup_cpu_source source;
  return source;
}

/// The text of a small file at `path` (a cgroup's CPU-time file), read with
/// one open and read: no stream buffers, nothing left open. Nothing, with
/// errno set, if it cannot be read.
std::optional<std::string> read_small_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  char buf[4096];
  auto n = ::read(fd, buf, sizeof(buf));
  auto err = errno;
  ::close(fd);
  errno = err;
  if (n < 0)
    return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

} // namespace

int64_t last_pid_given() {
  if (!in_own_pid_namespace())
    return -1;
  auto text = read_small_file("/proc/sys/kernel/ns_last_pid");
  if (!text || text->empty())
    return -1;
  char* end = nullptr;
  auto pid = std::strtoll(text->c_str(), &end, 10);
  return end != text->c_str() && pid > 0 ? pid : -1;
}

int64_t process_cpu_ns() {
  return rusage_ns(RUSAGE_SELF);
}

int64_t reaped_children_cpu_ns() {
  return rusage_ns(RUSAGE_CHILDREN);
}

int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void count_cpu_in_cgroup(const std::string& file, bool v2) {
  cgroup_source() = {file, v2};
}

other_cpu other_cpu_now() {
  // The thread's clock, unlike RUSAGE_THREAD, is brought up to date when
  // read (RUSAGE_THREAD may lag by a tick), and so is the thread's share of
  // its cgroups' CPU time; RUSAGE_SELF brings the caller's runtime up to
  // date too, and is not served from the tick-granular cache the
  // RLIMIT_CPU timer gives the process clock.
  if (const auto& cg = cgroup_source(); !cg.file.empty()) {
    auto thread_before = thread_cpu_ns();
    auto text = read_small_file(cg.file);
    auto err = errno;
    auto thread_after = thread_cpu_ns();
    auto ns = text ? parse_cgroup_cpu_ns(*text, cg.v2) : -1;
    if (ns < 0)
      return {0, 0,
        "cannot read the evaluation's CPU time from " + cg.file + ": "
          + (text ? "no CPU time in it" : std::strerror(err))};
    return {ns - thread_after, ns - thread_before, {}};
  }
  auto thread_before = thread_cpu_ns();
  auto process = rusage_ns(RUSAGE_SELF);
  auto thread_after = thread_cpu_ns();
  auto children = reaped_children_cpu_ns() + cpu_reaped_by_init_ns();
  return {process - thread_after + children,
    process - thread_before + children, {}};
}

std::string hidden_work_text(int64_t ns) {
  if (ns <= 1'000'000)
    return {};
  char ms[32];
  std::snprintf(ms, sizeof(ms), "%.3g", static_cast<double>(ns) / 1e6);
  return std::string{"hidden threads: other threads or child processes used "}
         + ms
         + " ms of CPU time during the timed calls (a kernel must do its "
           "work on the calling thread)";
}

bool shows_hidden_threads(int64_t cpu_ns, int64_t wall_ns, uint64_t calls) {
  auto slack = 2e6 + 2e4 * static_cast<double>(calls);
  return static_cast<double>(cpu_ns)
         > 1.5 * static_cast<double>(wall_ns) + slack;
}

} // namespace eat::devices
