#include "tests/devices/on_cpu_checks.hpp"

#include <stdexcept>

#include <dlfcn.h>

#include <catch2/catch.hpp>

#include "actors/agent/render.hpp"
#include "devices/compiler.hpp"
#include "tests/devices/cuda_on_cpu.hpp"
#include "tests/devices/small_tasks.hpp"
#include "tests/devices/test_support.hpp"

namespace eat::devices::test {

std::string instance_label(const param_map& params) {
  std::string label;
  for (const auto& [k, v] : params)
    label += (label.empty() ? "" : " ") + k + "=" + v;
  return label;
}

eval_result evaluate_source(
  const task_spec& task, const std::string& source, uint64_t seed) {
  auto work = make_temp_dir();
  auto opts = fast_options(work);
  // A GPU kernel emulated on the CPU takes tens of seconds a workload on a
  // loaded 2-core machine: a HIP warp_dot instance passed fast_options' 60 s
  // deadline in a CI run beside other builds.
  opts.eval_timeout_s = 300;
  auto dev = make_device(opts);
  auto c = make_candidate("c1", source);
  c.task = task.name;
  return dev->evaluate(task, c, seed);
}

eval_result evaluate_on_cpu(
  const task_spec& task, const std::string& cu, bool hip) {
  return evaluate_source(task, hip ? hip_on_cpu(cu) : cuda_on_cpu(cu));
}

void check_file_passes(
  const task_spec& task, const std::string& path, bool hip) {
  auto r = evaluate_on_cpu(task, read_source(path), hip);
  INFO(path << ": " << r.detail << r.build_log);
  CHECK(r.status == eval_status::passed);
}

const template_family& family_of(
  const task_spec& gpu, const std::string& name) {
  for (const auto& f : gpu.families)
    if (f.name == name)
      return f;
  FAIL(gpu.name << " has no template family " << name);
  throw std::logic_error("unreachable");
}

void check_instances(const task_spec& task, const template_family& family,
  const std::vector<param_map>& instances, bool hip) {
  for (const auto& params : instances) {
    auto source = render_template(family, params);
    REQUIRE(source);
    auto r = evaluate_on_cpu(task, *source, hip);
    INFO((hip ? "HIP " : "CUDA ")
         << family.name << " " << instance_label(params) << ": " << r.detail
         << r.build_log);
    CHECK(r.status == eval_status::passed);
  }
}

task_spec gpu_task_on_cpu(const std::string& name,
  const std::vector<std::string>& lines, const std::filesystem::path& dir,
  bool hip) {
  auto task = small_task(name, lines, dir);
  task.backend = "cpu";
  task.baseline_source = hip ? hip_on_cpu(task.baseline_source)
                             : cuda_on_cpu(task.baseline_source);
  task.expert_source.clear();
  task.expert_libs.clear();
  return task;
}

loaded_library::loaded_library(
  const std::string& source, const std::vector<std::string>& flags)
  : dir_{make_temp_dir()} {
  auto gxx = compiler::make("g++", dir_.path().string(), 120);
  REQUIRE(gxx);
  auto built = gxx->compile(source, flags, "library.cpp");
  REQUIRE(built);
  INFO(built->log);
  REQUIRE(built->ok);
  handle_ = ::dlopen(built->so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle_ != nullptr);
}

loaded_library::~loaded_library() {
  if (handle_ != nullptr)
    ::dlclose(handle_);
}

void* loaded_library::symbol(const char* name) const {
  void* address = ::dlsym(handle_, name);
  INFO(name);
  REQUIRE(address != nullptr);
  return address;
}

std::string edited(
  std::string source, const std::string& from, const std::string& to) {
  size_t count = 0;
  for (auto at = source.find(from); at != std::string::npos;
       at = source.find(from, at + to.size()), ++count)
    source.replace(at, from.size(), to);
  INFO(from);
  REQUIRE(count > 0);
  return source;
}

} // namespace eat::devices::test
