#include "actors/device_pool_compile.hpp"

#include "actors/device_server.hpp"
#include "devices/cpu_device.hpp"

namespace eat {

compile_worker_actor::behavior_type compile_worker(
  compile_worker_actor::pointer,
  std::vector<std::shared_ptr<devices::device>> devs, std::vector<int> cores) {
  return {
    [devs, cores](compile_atom, uint32_t index, const task_spec& task,
      const candidate& c) -> prepared_objects {
      prepared_objects out;
      if (index >= devs.size()) {
        out.status = eval_status::runtime_error;
        out.detail
          = "compile worker: no device number " + std::to_string(index);
        return out;
      }
      // Here, on the worker's own (detached) thread, each time: cheap, and
      // what its compilers inherit.
      if (auto why = devices::pin_thread(cores); !why.empty()) {
        out.status = eval_status::runtime_error;
        out.detail = "compile worker: cannot keep off the devices' cores: "
                     + why;
        return out;
      }
      return to_message(devs[index]->prepare(task, c));
    },
  };
}

} // namespace eat
