#include "devices/device.hpp"

#include <filesystem>

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
