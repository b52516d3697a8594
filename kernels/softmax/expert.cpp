// Expert softmax baseline: oneDNN's softmax primitive (Debian's libdnnl,
// 2.6), forward inference over the rows of a rows×cols float32 matrix
// (docs/harness.md, kind "softmax"). Linked with -ldnnl (task.toml:
// expert_libs). Reported next to results by `eat tasks check` and
// bench/kernels_bench; speedups are never measured against it.
//
// The primitive (JIT-compiled for this CPU) is made on the first call for
// a shape and kept until the shape changes, as an application would; the
// harness's warm-up calls absorb its creation. Threads: Debian's oneDNN
// runs on OpenMP, whose team is sized at first use from the CPUs this
// process may use; the runner pins itself to one core before loading the
// kernel, so no worker thread is started.

#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

namespace {

/// The primitive for the last shape seen.
struct plan {
  int64_t rows = -1;
  int64_t cols = -1;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::memory::desc md;
  dnnl::softmax_forward softmax;

  void prepare(int64_t r, int64_t c) {
    if (r == rows && c == cols)
      return;
    md = dnnl::memory::desc(
      {r, c}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
    dnnl::softmax_forward::desc desc(
      dnnl::prop_kind::forward_inference, md, 1);
    softmax = dnnl::softmax_forward({desc, engine});
    rows = r;
    cols = c;
  }
};

} // namespace

extern "C" void eat_softmax(
  const float* x, float* out, int64_t rows, int64_t cols) {
  static plan p;
  p.prepare(rows, cols);
  dnnl::memory src(p.md, p.engine, const_cast<float*>(x));
  dnnl::memory dst(p.md, p.engine, out);
  p.softmax.execute(p.stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  p.stream.wait();
}
