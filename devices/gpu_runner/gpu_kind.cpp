#include "devices/gpu_runner/gpu_kind.hpp"

namespace eat::devices {

namespace {

using gemm_fn = int (*)(
  const float*, const float*, float*, int64_t, int64_t, int64_t, void*);

int call_gemm(void* fn, const float* const* in, float* out, const int64_t* d,
  void* stream) {
  return reinterpret_cast<gemm_fn>(fn)(
    in[0], in[1], out, d[0], d[1], d[2], stream);
}

const gpu_kind gpu_kinds[] = {
  {"gemm", "eat_gemm", call_gemm},
};

} // namespace

const gpu_kind* find_gpu_kind(std::string_view name) {
  for (const auto& k : gpu_kinds)
    if (name == k.name)
      return &k;
  return nullptr;
}

} // namespace eat::devices
