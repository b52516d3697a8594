#include "devices/gpu_runner/gpu_kind.hpp"

#include "devices/kind.hpp"

namespace eat::devices {

namespace {

using gemm_fn = int (*)(
  const float*, const float*, float*, int64_t, int64_t, int64_t, void*);

int call_gemm(void* fn, const void* const* in, void* const* out,
  const int64_t* d, void* stream) {
  return reinterpret_cast<gemm_fn>(fn)(static_cast<const float*>(in[0]),
    static_cast<const float*>(in[1]), static_cast<float*>(out[0]), d[0], d[1],
    d[2], stream);
}

using definition_fn
  = int (*)(const void* const*, void* const*, const int64_t*, void*);

int call_definition(void* fn, const void* const* in, void* const* out,
  const int64_t* axes, void* stream) {
  return reinterpret_cast<definition_fn>(fn)(in, out, axes, stream);
}

const gpu_kind gpu_kinds[] = {
  {"gemm", "eat_gemm", call_gemm},
  {"definition", "eat_kernel", call_definition},
};

} // namespace

const gpu_kind* find_gpu_kind(std::string_view name) {
  for (const auto& k : gpu_kinds)
    if (name == k.name)
      return &k;
  return nullptr;
}

std::string check_gpu_task(const task_spec& task) {
  if (find_kind(task.kind) != nullptr && find_gpu_kind(task.kind) == nullptr)
    return "kind '" + task.kind
           + "' has no GPU entry ABI (GPU tasks use kind gemm or definition)";
  // The backend itself is the caller's to match.
  return check_task(task);
}

} // namespace eat::devices
