// The runner's element-wise checks and hygiene tests, on hand-made buffers.

#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <thread>

#include <catch2/catch.hpp>

#include "devices/runner/checks.hpp"

using namespace eat::devices;

TEST_CASE("outputs within atol + rtol * |ref| pass and report their largest "
          "error") {
  std::vector<float> got{1.0f, 2.0005f, -3.0f};
  std::vector<double> ref{1.0, 2.0, -3.001};
  auto x = compare_outputs(got.data(), ref.data(), 3, 1e-3, 1e-4);
  CHECK(x.ok);
  CHECK(x.max_abs_error == Approx(0.001).epsilon(1e-3));
}

TEST_CASE("the first element beyond the tolerance is reported") {
  std::vector<float> got{1.0f, 2.5f, 9.0f};
  std::vector<double> ref{1.0, 2.0, 3.0};
  auto x = compare_outputs(got.data(), ref.data(), 3, 1e-4, 1e-4);
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
    auto x = compare_outputs(got.data(), ref.data(), 2, 1e9, 1e9);
    REQUIRE_FALSE(x.ok);
    CHECK(x.index == 1);
    CHECK(x.reason == "non-finite value");
  }
}

TEST_CASE("an all-zero output fails against a non-zero reference even within "
          "a loose tolerance") {
  std::vector<float> got{0.0f, 0.0f};
  std::vector<double> ref{0.0, 0.5};
  auto x = compare_outputs(got.data(), ref.data(), 2, 1.0, 0.0);
  REQUIRE_FALSE(x.ok);
  CHECK(x.reason == "all zeros");
  CHECK(x.index == 1);
  std::vector<double> zero_ref{0.0, 0.0};
  CHECK(compare_outputs(got.data(), zero_ref.data(), 2, 0, 0).ok);
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
