#include "devices/device.hpp"

namespace eat::devices {

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
