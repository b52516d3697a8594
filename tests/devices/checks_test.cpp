// The runner's element-wise checks and hygiene tests, on hand-made buffers.

#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <future>
#include <limits>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/checks.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat::devices;
using eat::devices::test::spin_for_cpu;

TEST_CASE("outputs within atol + rtol * |ref| pass and report their largest "
          "error") {
  std::vector<float> got{1.0f, 2.0005f, -3.0f};
  std::vector<double> ref{1.0, 2.0, -3.001};
  auto x = compare_outputs(got.data(), ref.data(), 3, tolerance{1e-3, 1e-4});
  CHECK(x.ok);
  CHECK(x.max_abs_error == Approx(0.001).epsilon(1e-3));
}

TEST_CASE("the first element beyond the tolerance is reported") {
  std::vector<float> got{1.0f, 2.5f, 9.0f};
  std::vector<double> ref{1.0, 2.0, 3.0};
  auto x = compare_outputs(got.data(), ref.data(), 3, tolerance{1e-4, 1e-4});
  REQUIRE_FALSE(x.ok);
  CHECK(x.index == 1);
  CHECK(x.got == 2.5);
  CHECK(x.expected == 2.0);
  CHECK(x.reason == "mismatch");
  CHECK(describe(x, "C[0][1]").find("C[0][1] = 2.5 but expected 2")
        != std::string::npos);
}

TEST_CASE("NaN or Inf where the reference is finite fails") {
  std::vector<double> ref{1.0, 2.0};
  for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity()}) {
    std::vector<float> got{1.0f, bad};
    auto x = compare_outputs(got.data(), ref.data(), 2, tolerance{1e9, 1e9});
    REQUIRE_FALSE(x.ok);
    CHECK(x.index == 1);
    CHECK(x.reason == "non-finite value");
  }
}

TEST_CASE("an all-zero output fails against a non-zero reference even within "
          "a loose tolerance") {
  std::vector<float> got{0.0f, 0.0f};
  std::vector<double> ref{0.0, 0.5};
  auto x = compare_outputs(got.data(), ref.data(), 2, tolerance{1.0, 0.0});
  REQUIRE_FALSE(x.ok);
  CHECK(x.reason == "all zeros");
  CHECK(x.index == 1);
  std::vector<double> zero_ref{0.0, 0.0};
  CHECK(compare_outputs(got.data(), zero_ref.data(), 2, tolerance{0, 0}).ok);
}

TEST_CASE("in a long output, the first failing element and the largest "
          "errors are those an element-by-element pass finds") {
  // Long enough for several of the blocks compare_outputs passes whole.
  const size_t n = 20000;
  std::vector<float> got(n);
  std::vector<double> ref(n);
  for (size_t i = 0; i < n; ++i) {
    ref[i] = 1.0 + static_cast<double>(i % 97);
    got[i] = static_cast<float>(ref[i]);
  }
  got[12345] += 0.0004f; // within 1e-3 + 1e-4 * |ref|: the largest error
  auto pass = compare_outputs(got.data(), ref.data(), n, tolerance{1e-3, 1e-4});
  CHECK(pass.ok);
  auto expected_error = std::fabs(static_cast<double>(got[12345]) - ref[12345]);
  CHECK(pass.max_abs_error == expected_error);
  CHECK(pass.max_rel_error == expected_error / ref[12345]);
  // A mismatch is reported before a NaN that comes after it.
  for (size_t bad : {size_t{4095}, size_t{4096}, size_t{19998}}) {
    auto copy = got;
    copy[bad] = 1e6f;
    copy[n - 1] = std::nanf("");
    auto x = compare_outputs(copy.data(), ref.data(), n, tolerance{1e-3, 1e-4});
    REQUIRE_FALSE(x.ok);
    CHECK(x.index == bad);
    CHECK(x.reason == "mismatch");
  }
  // bfloat16 outputs, read through their own path: the same verdicts.
  std::vector<uint16_t> narrow(n);
  for (size_t i = 0; i < n; ++i)
    narrow[i] = float_to_bfloat16(static_cast<float>(ref[i]));
  CHECK(compare_outputs(
    dtype::bfloat16, narrow.data(), ref.data(), n, tolerance{1e-3, 1e-4})
          .ok);
  narrow[5000] = float_to_bfloat16(1e6f);
  auto wide = compare_outputs(
    dtype::bfloat16, narrow.data(), ref.data(), n, tolerance{1e-3, 1e-4});
  REQUIRE_FALSE(wide.ok);
  CHECK(wide.index == 5000);
  CHECK(wide.got == static_cast<double>(bfloat16_to_float(narrow[5000])));
  std::vector<float> zeros(n, 0.0f);
  std::vector<double> late(n, 0.0);
  late[9000] = 0.5;
  auto x = compare_outputs(zeros.data(), late.data(), n, tolerance{1.0, 0.0});
  REQUIRE_FALSE(x.ok);
  CHECK(x.reason == "all zeros");
  CHECK(x.index == 9000);
}

TEST_CASE("bitwise comparison and the input hash see a change anywhere in a "
          "long buffer") {
  const size_t n = 10007; // not a multiple of the hash's 32-byte steps
  std::vector<std::vector<float>> bufs{std::vector<float>(n, 1.5f)};
  auto copy = bufs[0];
  auto before = hash_buffers(bufs);
  for (size_t i : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{4},
         size_t{4096}, size_t{8191}, n - 2, n - 1}) {
    bufs[0][i] = -1.5f;
    CHECK(first_bitwise_difference(copy.data(), bufs[0].data(), n) == i);
    CHECK(hash_buffers(bufs) != before);
    bufs[0][i] = 1.5f;
  }
  CHECK(hash_buffers(bufs) == before);
  CHECK(first_bitwise_difference(copy.data(), bufs[0].data(), n) == n);
}

TEST_CASE("guard zones catch writes before and after an output") {
  guarded_output out{8};
  CHECK(out.zones_intact());
  CHECK(std::isnan(out.as<float>()[0]));
  out.as<float>()[7] = 1.0f;
  CHECK(out.zones_intact());
  out.as<float>()[8] = 1.0f;
  CHECK_FALSE(out.zones_intact());
  out.poison();
  CHECK(out.zones_intact());
  out.as<float>()[-1] = 1.0f;
  CHECK_FALSE(out.zones_intact());
}

TEST_CASE("poisoning the data leaves a stray write in the zones visible") {
  guarded_output out{4};
  out.as<float>()[4] = 2.0f;
  out.poison_data();
  CHECK_FALSE(out.zones_intact());
}

TEST_CASE("poisoning the data before a timed call poisons every element of "
          "every dtype and length, and only those") {
  // Lengths whose bytes end inside a 16-byte block (the non-temporal stores
  // write whole blocks, plain stores the rest).
  for (auto type : {dtype::float32, dtype::float16, dtype::bfloat16,
         dtype::int32, dtype::int64}) {
    for (size_t n : {1, 3, 4, 7, 8, 9, 1000, 1001}) {
      INFO(to_string(type) << " x " << n);
      guarded_output out{type, n};
      std::memset(out.data(), 0, n * size_of(type));
      out.poison_data();
      for (size_t i = 0; i < n; ++i)
        CHECK(out.poisoned(i));
      CHECK(out.zones_intact());
    }
  }
}

TEST_CASE("the input hash changes when any element changes") {
  std::vector<std::vector<float>> bufs{{1, 2, 3}, {4, 5, 6, 7, 8, 9, 10}};
  auto before = hash_buffers(bufs);
  CHECK(hash_buffers(bufs) == before);
  bufs[1][6] = 10.5f;
  CHECK(hash_buffers(bufs) != before);
  bufs[1][6] = 10.0f;
  CHECK(hash_buffers(bufs) == before);
  bufs[0][0] = -1.0f;
  CHECK(hash_buffers(bufs) != before);
}

TEST_CASE("bitwise comparison tells -0 from +0") {
  std::vector<float> x{1.0f, 0.0f};
  std::vector<float> y{1.0f, -0.0f};
  CHECK(first_bitwise_difference(x.data(), y.data(), 2) == 1);
  CHECK(first_bitwise_difference(x.data(), x.data(), 2) == 2);
}

TEST_CASE("thread_count sees a second thread while it runs") {
  auto before = thread_count();
  std::promise<void> release;
  std::promise<void> started;
  std::thread worker{[&] {
    started.set_value();
    release.get_future().wait();
  }};
  started.get_future().wait();
  CHECK(thread_count() == before + 1);
  release.set_value();
  worker.join();
  CHECK(thread_count() == before);
}

TEST_CASE("CPU time far above wall time shows hidden threads") {
  // 100 calls: slack 2 ms + 100 * 20 us = 4 ms.
  CHECK_FALSE(shows_hidden_threads(100'000'000, 100'000'000, 100));
  CHECK_FALSE(shows_hidden_threads(154'000'000, 100'000'000, 100));
  CHECK(shows_hidden_threads(155'000'000, 100'000'000, 100));
  CHECK(shows_hidden_threads(200'000'000, 100'000'000, 100));
  // Tiny calls: clock noise within the slack (2.2 ms here) is tolerated.
  CHECK_FALSE(shows_hidden_threads(2'000'000, 100'000, 10));
  CHECK(shows_hidden_threads(2'500'000, 100'000, 10));
}

TEST_CASE("a cgroup CPU-time file that cannot be read, or holds no CPU "
          "time, is an error of other_cpu_now, not a figure") {
  auto dir = eat::devices::test::make_temp_dir();
  auto missing = (dir.path() / "missing" / "cpu.stat").string();
  count_cpu_in_cgroup(missing, true);
  auto unreadable = other_cpu_now();
  auto garbage = (dir.path() / "cpu.stat").string();
  { std::ofstream{garbage} << "user_usec 12\n"; }
  count_cpu_in_cgroup(garbage, true);
  auto empty = other_cpu_now();
  { std::ofstream{garbage} << "usage_usec 12\n"; }
  auto read = other_cpu_now();
  count_cpu_in_cgroup("", false); // back to getrusage for the other cases
  CHECK(unreadable.error
        == "cannot read the evaluation's CPU time from " + missing
             + ": No such file or directory");
  CHECK(empty.error
        == "cannot read the evaluation's CPU time from " + garbage
             + ": no CPU time in it");
  CHECK(read.error.empty());
  // 12 us of the file's, less the calling thread's own time.
  CHECK(read.least <= read.most);
  CHECK(read.most < 12'000);
  CHECK(other_cpu_now().error.empty());
}

TEST_CASE("other_cpu counts the work of other threads and reaped child "
          "processes, not the calling thread's") {
  auto before = other_cpu_now();
  CHECK(before.least <= before.most);
  spin_for_cpu(20'000'000);
  CHECK(other_cpu_between(before, other_cpu_now()) < 1'000'000);
  CHECK(hidden_work_text(other_cpu_between(before, other_cpu_now())).empty());

  before = other_cpu_now();
  std::thread worker{[] { spin_for_cpu(5'000'000); }};
  worker.join();
  auto threads = other_cpu_between(before, other_cpu_now());
  CHECK(threads >= 4'900'000);
  CHECK(hidden_work_text(threads).find("hidden threads: other threads or "
                                       "child processes used ")
        == 0);

  before = other_cpu_now();
  auto pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    spin_for_cpu(5'000'000);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(other_cpu_between(before, other_cpu_now()) >= 4'900'000);
}

TEST_CASE("a stall between the reads of the thread and the process widens "
          "the bounds and counts as no other thread's work") {
  // An 8 ms stall after the process's read counts as the calling thread's
  // CPU time in the thread's second read: the start's least is 8 ms low.
  // Taken alone (process minus thread, as the gate once did), it made 8 ms
  // of hidden work appear; the bound the gate uses, most, is unaffected.
  other_cpu start{-8'000'000, 0};
  other_cpu end{0, 0};
  CHECK(other_cpu_between(start, end) == 0);
  CHECK(hidden_work_text(other_cpu_between(start, end)).empty());
  // Another thread's 5 ms still counts in full.
  CHECK(other_cpu_between(start, other_cpu{5'000'000, 5'000'000})
        == 5'000'000);
}

TEST_CASE("other threads' CPU time within 1 ms is clock rounding, beyond it "
          "hidden work") {
  CHECK(hidden_work_text(0).empty());
  CHECK(hidden_work_text(1'000'000).empty());
  CHECK(hidden_work_text(4'250'000)
        == "hidden threads: other threads or child processes used 4.25 ms of "
           "CPU time during the timed calls (a kernel must do its work on the "
           "calling thread)");
}

TEST_CASE("with a matched ratio below 1, a few elements outside the tolerance "
          "pass as long as none exceeds the maximum error") {
  std::vector<double> ref(200, 1.0);
  std::vector<float> got(200, 1.0f);
  got[7] = 1.05f;
  got[150] = 0.97f;
  tolerance tol{1e-4, 1e-4, 0.99, 0.1};
  auto x = compare_outputs(got.data(), ref.data(), 200, tol);
  CHECK(x.ok);
  CHECK(x.mismatched == 2);
  CHECK(x.max_abs_error == Approx(0.05).epsilon(1e-3));
  // The same output against every element's tolerance fails at the first.
  auto strict
    = compare_outputs(got.data(), ref.data(), 200, tolerance{1e-4, 1e-4});
  REQUIRE_FALSE(strict.ok);
  CHECK(strict.reason == "mismatch");
  CHECK(strict.index == 7);
}

TEST_CASE("more elements outside the tolerance than the matched ratio allows "
          "fail, naming how many and the first of them") {
  std::vector<double> ref(200, 1.0);
  std::vector<float> got(200, 1.0f);
  for (size_t i : {3, 40, 41})
    got[i] = 1.25f;
  auto x = compare_outputs(
    got.data(), ref.data(), 200, tolerance{1e-4, 1e-4, 0.99, 0.5});
  REQUIRE_FALSE(x.ok);
  CHECK(x.reason == "too few matched");
  CHECK(x.mismatched == 3);
  CHECK(x.index == 3);
  auto text = describe(x, "out[3]");
  CHECK_THAT(text, Catch::Contains("3 of 200 (1.5 %) outside it"));
  CHECK_THAT(text, Catch::Contains("a matched ratio of 99 % required"));
  CHECK_THAT(text, Catch::Contains("the first: out[3] = 1.25 but expected 1"));
}

TEST_CASE("an element beyond the maximum error fails whatever the ratio, and "
          "the cap holds inside a loose tolerance too") {
  std::vector<double> ref(200, 1.0);
  std::vector<float> got(200, 1.0f);
  got[9] = 1.5f;
  auto x = compare_outputs(
    got.data(), ref.data(), 200, tolerance{1e-4, 1e-4, 0.5, 0.25});
  REQUIRE_FALSE(x.ok);
  CHECK(x.reason == "above the maximum error");
  CHECK(x.index == 9);
  CHECK_THAT(describe(x, "out[9]"),
    Catch::Contains("out[9] = 1.5 but expected 1 (|error| 0.5 > maximum "
                    "error 0.25)"));
  auto loose = compare_outputs(
    got.data(), ref.data(), 200, tolerance{1.0, 0.0, 1.0, 0.25});
  REQUIRE_FALSE(loose.ok);
  CHECK(loose.reason == "above the maximum error");
}

TEST_CASE("a matched ratio never excuses NaN, Inf or an all-zero output") {
  std::vector<double> ref(100, 1.0);
  std::vector<float> got(100, 1.0f);
  got[4] = std::nanf("");
  tolerance tol{1e-4, 1e-4, 0.5, 10};
  auto x = compare_outputs(got.data(), ref.data(), 100, tol);
  REQUIRE_FALSE(x.ok);
  CHECK(x.reason == "non-finite value");
  std::vector<float> zeros(100, 0.0f);
  auto z = compare_outputs(zeros.data(), ref.data(), 100, tol);
  REQUIRE_FALSE(z.ok);
  CHECK(z.reason == "all zeros");
}

TEST_CASE("a sampled comparison leaves the matched ratio to whole outputs but "
          "keeps the cap") {
  std::vector<float> base(10, 1.0f);
  std::vector<float> got(10, 1.0f);
  // Half of a small sample outside the tolerance: a whole output with this
  // share would fail; a sample of it says little.
  for (size_t i = 0; i < 5; ++i)
    got[i] = 1.01f;
  tolerance tol{1e-4, 1e-4, 0.99, 0.1};
  CHECK(compare_elements(dtype::float32, got.data(), base.data(), 10, tol).ok);
  CHECK_FALSE(
    compare_outputs(dtype::float32, got.data(), base.data(), 10, tol).ok);
  got[2] = 2.0f;
  auto x = compare_elements(dtype::float32, got.data(), base.data(), 10, tol);
  REQUIRE_FALSE(x.ok);
  CHECK(x.reason == "above the maximum error");
}
