// Specification of which GPUs a GPU runner is started seeing
// (devices/gpu_visibility.hpp): only its own, named as the parent's
// runtime knows it.

#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "actors/agent/render.hpp"
#include "devices/gpu_visibility.hpp"

using namespace eat;
using namespace eat::devices;

namespace {

using strings = std::vector<std::string>;

/// An environment of the given variables only.
env_lookup environment(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto i = vars.find(name);
    return i == vars.end() ? nullptr : i->second.c_str();
  };
}

strings visible(const std::string& backend, int index,
  std::map<std::string, std::string> vars = {}) {
  auto env = only_gpu_environment(backend, index, environment(vars));
  INFO((env ? std::string{} : render(env.error())));
  REQUIRE(env);
  return *env;
}

std::string refusal(const std::string& backend, int index,
  std::map<std::string, std::string> vars) {
  auto env = only_gpu_environment(backend, index, environment(vars));
  REQUIRE_FALSE(env);
  return render(env.error());
}

} // namespace

TEST_CASE("with no list of its own, the parent names its GPU by index") {
  CHECK(visible("cuda", 0) == strings{"CUDA_VISIBLE_DEVICES=0"});
  CHECK(visible("cuda", 3) == strings{"CUDA_VISIBLE_DEVICES=3"});
  CHECK(visible("hip", 2)
        == strings{"HIP_VISIBLE_DEVICES=2", "CUDA_VISIBLE_DEVICES"});
}

TEST_CASE("a parent restricted by a list passes on its entry at the GPU's "
          "index, as written") {
  CHECK(visible("cuda", 1, {{"CUDA_VISIBLE_DEVICES", "5,7"}})
        == strings{"CUDA_VISIBLE_DEVICES=7"});
  CHECK(visible("cuda", 0, {{"CUDA_VISIBLE_DEVICES", "MIG-1234-abcd, 2"}})
        == strings{"CUDA_VISIBLE_DEVICES=MIG-1234-abcd"});
  CHECK(visible("cuda", 1, {{"CUDA_VISIBLE_DEVICES", "GPU-aa ,  GPU-bb "}})
        == strings{"CUDA_VISIBLE_DEVICES=GPU-bb"});
}

TEST_CASE("a HIP runner takes HIP_VISIBLE_DEVICES first, else "
          "CUDA_VISIBLE_DEVICES, and keeps only its own variable") {
  CHECK(visible("hip", 1,
          {{"HIP_VISIBLE_DEVICES", "4,6"}, {"CUDA_VISIBLE_DEVICES", "0,1"}})
        == strings{"HIP_VISIBLE_DEVICES=6", "CUDA_VISIBLE_DEVICES"});
  CHECK(visible("hip", 0, {{"CUDA_VISIBLE_DEVICES", "3"}})
        == strings{"HIP_VISIBLE_DEVICES=3", "CUDA_VISIBLE_DEVICES"});
  // A CUDA runner ignores HIP's variable.
  CHECK(visible("cuda", 0, {{"HIP_VISIBLE_DEVICES", "4"}})
        == strings{"CUDA_VISIBLE_DEVICES=0"});
}

TEST_CASE("a GPU the parent's list has no entry for is refused, naming the "
          "list") {
  CHECK_THAT(refusal("cuda", 2, {{"CUDA_VISIBLE_DEVICES", "0,1"}}),
    Catch::Contains("CUDA_VISIBLE_DEVICES=0,1 has no entry for GPU 2"));
  CHECK_THAT(refusal("cuda", 1, {{"CUDA_VISIBLE_DEVICES", "0,,2"}}),
    Catch::Contains("has no entry for GPU 1"));
  CHECK_THAT(refusal("hip", 0, {{"HIP_VISIBLE_DEVICES", ""}}),
    Catch::Contains("HIP_VISIBLE_DEVICES= has no entry for GPU 0"));
  CHECK_THAT(refusal("opencl", 0, {}), Catch::Contains("unknown GPU backend"));
  CHECK_THAT(refusal("cuda", -1, {}), Catch::Contains("negative"));
}
