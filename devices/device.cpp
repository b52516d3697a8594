#include "devices/device.hpp"

#include <filesystem>

#include "devices/sha256.hpp"

namespace eat::devices {

bool objects_exist(const prepared& p) {
  for (const auto* path :
    {&p.reference_object, &p.baseline_object, &p.candidate_object}) {
    std::error_code ec;
    if (path->find('/') != std::string::npos
        && !std::filesystem::exists(*path, ec))
      return false;
  }
  return true;
}

const prepared& kept_or_again(const device& d, const task_spec& task,
  const candidate& c, const prepared& objects, prepared& again) {
  if (objects_exist(objects))
    return objects;
  again = d.prepare(task, c);
  return again;
}

eval_result begin_result(const candidate& c, uint64_t seed,
  const prepared& objects, std::string device, std::string compiler) {
  eval_result result;
  result.candidate = c.id;
  result.seed = seed;
  result.source_hash = sha256_hex(c.source);
  result.device = std::move(device);
  result.compiler = std::move(compiler);
  result.compile_s = objects.seconds;
  result.build_log = objects.build_log;
  return result;
}

device::~device() {
  // nop
}

std::string device::check_health() {
  return {};
}

eval_result device::evaluate(const task_spec& task, const candidate& c,
                             uint64_t seed) {
  return run(task, c, prepare(task, c), seed);
}

} // namespace eat::devices
