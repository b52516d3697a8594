// Specification of how `eat run` treats an http agent's kernels: they are
// untrusted code, so the CPU device runs each in a confined process of its
// own unless the configuration turns kernel_processes off (docs/config.md,
// docs/harness.md "Kernel processes"). End to end: the real `eat run`
// against a local replay server whose model answers with a kernel.

#include <catch2/catch.hpp>

#include <fstream>

#include <sys/wait.h>

#include "tests/actors/agent/replay_server.hpp"
#include "tests/runtime/chat_reply.hpp"
#include "tests/runtime/cli_support.hpp"
#include "tests/runtime/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

/// The naive sgemm with its loops swapped (i-p-j), in a fenced block.
const char* model_kernel = R"(Here is a faster loop order.

```cpp
#include <cstdint>

extern "C" void eat_gemm(
  const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j)
      c[i * n + j] = 0.0f;
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        c[i * n + j] += a[i * k + p] * b[p * n + j];
  }
}
```
)";

} // namespace

TEST_CASE("an http agent's kernels run in processes of their own by "
          "default") {
  eat::test::temp_dir tmp;
  eat::test::replay_server server;
  for (int i = 0; i < 6; ++i)
    server.enqueue(eat::test::chat_reply(model_kernel, "kernel-test"));
  auto config = tmp.path() / "config.toml";
  std::ofstream{config}
    << "[run]\nname = \"http-run\"\ntask = \"sgemm\"\n"
    << "tasks_dir = \"" << EAT_SOURCE_DIR << "/kernels\"\n"
    << "root = \"" << tmp.path().string() << "\"\nseed = 5\n"
    << "max_evaluations = 2\n"
    << "[supervisor]\nteams = 1\n"
    << "[agents]\nbackend = \"http\"\n"
    << "[agents.http]\napi = \"openai\"\nbase_url = \"" << server.base_url()
    << "\"\nmodel = \"kernel-test\"\ntimeout_s = 60\n"
    << "[timing]\nwarmup = 1\nmin_samples = 3\nmin_time_s = 0.01\n"
    << "max_time_s = 0.2\ncheck_seeds = 2\n";
  auto dir = tmp.path() / "run";
  eat::test::child_process run{
    EAT_BINARY, {"run", config.string(), "--run-dir", dir.string()}};
  std::string output;
  auto status = run.finish(output);
  INFO(output);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_THAT(output, Catch::Contains("passed"));
  CHECK_THAT(output, Catch::Contains("1 team(s) x 1 http agent(s), 0 of"));
  auto history = eat::test::eat_cli({"history", dir.string(), "--json"});
  REQUIRE(history.code == eat::exit_code::ok);
  CHECK_THAT(history.out,
    Catch::Contains("baseline and candidate each in a process of its own"));
  CHECK_THAT(
    history.out, !Catch::Contains("cpu: steady_clock around each call"));
}
