#include "tests/devices/on_cpu_checks.hpp"

#include <stdexcept>

#include <catch2/catch.hpp>

#include "actors/agent/render.hpp"
#include "tests/devices/cuda_on_cpu.hpp"
#include "tests/devices/test_support.hpp"

namespace eat::devices::test {

namespace {

/// "k=v k=v" for a template instance.
std::string instance_label(const param_map& params) {
  std::string label;
  for (const auto& [k, v] : params)
    label += (label.empty() ? "" : " ") + k + "=" + v;
  return label;
}

} // namespace

eval_result evaluate_on_cpu(
  const task_spec& task, const std::string& cu, bool hip) {
  auto work = make_temp_dir();
  auto opts = fast_options(work);
  auto dev = make_device(opts);
  auto c = make_candidate(
    "cuda_on_cpu", hip ? hip_on_cpu(cu) : cuda_on_cpu(cu));
  c.task = task.name;
  return dev->evaluate(task, c, 11);
}

void check_file_passes(
  const task_spec& task, const std::string& path, bool hip) {
  auto r = evaluate_on_cpu(task, read_source(path), hip);
  INFO(path << ": " << r.detail << r.build_log);
  CHECK(r.status == eval_status::passed);
}

const template_family& family_of(const task_spec& gpu, const std::string& name) {
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
    INFO((hip ? "HIP " : "CUDA ") << family.name << " "
                                  << instance_label(params) << ": "
                                  << r.detail << r.build_log);
    CHECK(r.status == eval_status::passed);
  }
}

} // namespace eat::devices::test
