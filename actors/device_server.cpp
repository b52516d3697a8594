#include "actors/device_server.hpp"

namespace eat {

device_actor::behavior_type
device_server(device_actor::pointer, std::shared_ptr<devices::device> dev) {
  return {
    [dev](evaluate_atom, const task_spec& task, const candidate& c,
          uint64_t seed) -> eval_result { return dev->evaluate(task, c, seed); },
  };
}

} // namespace eat
