#include "actors/device_pool_compile.hpp"

#include "actors/device_server.hpp"

namespace eat {

compile_worker_actor::behavior_type compile_worker(
  compile_worker_actor::pointer,
  std::vector<std::shared_ptr<devices::device>> devs) {
  return {
    [devs](compile_atom, uint32_t index, const task_spec& task,
      const candidate& c) -> prepared_objects {
      if (index >= devs.size()) {
        prepared_objects out;
        out.status = eval_status::runtime_error;
        out.detail
          = "compile worker: no device number " + std::to_string(index);
        return out;
      }
      return to_message(devs[index]->prepare(task, c));
    },
  };
}

} // namespace eat
