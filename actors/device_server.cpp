#include "actors/device_server.hpp"

namespace eat {

device_server_actor::behavior_type device_server(
  device_server_actor::pointer, std::shared_ptr<devices::device> dev) {
  return {
    [dev](evaluate_atom, const task_spec& task, const candidate& c,
      uint64_t seed) -> eval_result {
      return dev->evaluate(task, c, seed);
    },
    [dev](run_atom, const task_spec& task, const candidate& c,
      prepared_objects& objects, uint64_t seed) -> eval_result {
      return dev->run(task, c, from_message(std::move(objects)), seed);
    },
    [dev](health_atom) -> std::string {
      return dev->check_health();
    },
  };
}

prepared_objects to_message(devices::prepared x) {
  return {x.status, std::move(x.detail), std::move(x.build_log), x.seconds,
    std::move(x.reference_object), std::move(x.baseline_object),
    std::move(x.candidate_object)};
}

devices::prepared from_message(prepared_objects x) {
  return {x.status, std::move(x.detail), std::move(x.build_log), x.seconds,
    std::move(x.reference_object), std::move(x.baseline_object),
    std::move(x.candidate_object)};
}

} // namespace eat
