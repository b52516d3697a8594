// CUDA on the CPU, for tests: enough of CUDA C++ for this project's CUDA
// kernels (the GPU definition tasks' baselines and templates) to run on the
// CPU, so that their logic is checked by the CPU harness against the
// task's reference on a machine without a GPU. Nothing here is timed or
// meant to be fast. tests/devices/cuda_on_cpu.hpp prepends this text to a
// kernel's source (with its CUDA includes removed and every launch
// `k<<<grid, block, smem, stream>>>(args)` rewritten as
// `eat_emu::launcher(grid, block, smem, stream)(k, args)`).
//
// Model: blocks run one after another; the threads of a block are fibers
// (no OS threads: the runner's sandbox limits processes) that run
// until they wait at a barrier, in index order or in reverse (alternating
// by block and barrier, so that a missing barrier shows in some block).
// __syncthreads() releases when every live
// thread of the block waits there; a warp barrier (__syncwarp and each step
// of a shuffle) when every live thread of the warp (32 threads; a 64-lane
// wavefront for HIP sources, EAT_EMU_HIP) waits there. Threads that return
// no longer count, as on a GPU. A block whose threads wait at barriers that
// can never release (a shuffle in divergent code, __syncthreads in half the
// block) aborts with a message. __shared__ variables are function statics,
// shared by the threads of a block; since blocks run in turn, every block
// sees them as its own. Device memory is host memory (cudaMalloc is malloc).

// Fortified longjmp refuses to jump between stacks, which fibers do.
#undef _FORTIFY_SOURCE

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include <setjmp.h>
#include <ucontext.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1)
      : x(x_), y(y_), z(z_) {}
};
struct float2 {
  float x, y;
};
struct __align__(16) float4 {
  float x, y, z, w;
};
struct __align__(8) uint2 {
  unsigned x, y;
};
struct __align__(16) uint4 {
  unsigned x, y, z, w;
};
inline float2 make_float2(float x, float y) {
  return {x, y};
}

using cudaStream_t = void*;
using cudaError_t = int;
constexpr cudaError_t cudaSuccess = 0;
inline cudaError_t cudaGetLastError() {
  return cudaSuccess;
}
#if defined(EAT_EMU_HIP)
constexpr int warpSize = 64;
#else
constexpr int warpSize = 32;
#endif
inline cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = std::malloc(bytes);
  return *p != nullptr ? cudaSuccess : 2; // cudaErrorMemoryAllocation
}
inline cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}

namespace eat_emu {

enum class state { runnable, block_barrier, warp_barrier, done };

// A fiber starts on its own stack by makecontext/swapcontext once; after
// that, fibers and the scheduler switch with _setjmp/_longjmp, which save
// no signal mask (swapcontext makes a system call per switch, and a warp
// shuffle is two switches per lane).
struct fiber {
  ucontext_t context;
  jmp_buf jump;
  std::vector<char> stack;
  state st = state::done;
  bool started = false;
};

struct block_run {
  std::vector<fiber> fibers;
  ucontext_t scheduler;
  jmp_buf scheduler_jump;
  unsigned current = 0;
  const std::function<void()>* body = nullptr;
  std::vector<uint64_t> slots; // one shuffle value per thread
};

inline block_run& run() {
  static block_run r;
  return r;
}

inline dim3 thread_idx, block_idx, block_dim, grid_dim;

constexpr size_t stack_bytes = 256 * 1024;

inline void wait(state why) {
  auto& r = run();
  auto& f = r.fibers[r.current];
  f.st = why;
  if (_setjmp(f.jump) == 0)
    _longjmp(r.scheduler_jump, 1);
}

inline void fiber_main() {
  auto& r = run();
  (*r.body)();
  r.fibers[r.current].st = state::done;
  _longjmp(r.scheduler_jump, 1); // never returns: uc_link is not used
}

/// Runs fiber `t` until it waits or ends.
inline void resume(unsigned t) {
  auto& r = run();
  auto& f = r.fibers[t];
  if (_setjmp(r.scheduler_jump) != 0)
    return;
  if (!f.started) {
    f.started = true;
    swapcontext(&r.scheduler, &f.context);
  }
  _longjmp(f.jump, 1);
}

/// Releases the threads waiting at `at` in [first, last) if every live
/// thread there waits at it; returns whether it did.
inline bool release(unsigned first, unsigned last, state at) {
  auto& f = run().fibers;
  bool any = false;
  for (unsigned t = first; t < last; ++t) {
    if (f[t].st == at)
      any = true;
    else if (f[t].st != state::done)
      return false;
  }
  if (any)
    for (unsigned t = first; t < last; ++t)
      if (f[t].st == at)
        f[t].st = state::runnable;
  return any;
}

inline void run_block(unsigned threads) {
  auto& r = run();
  r.fibers.resize(threads);
  r.slots.assign(threads, 0);
  for (auto& f : r.fibers) {
    if (f.stack.empty())
      f.stack.resize(stack_bytes);
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.data();
    f.context.uc_stack.ss_size = f.stack.size();
    f.context.uc_link = nullptr;
    makecontext(&f.context, fiber_main, 0);
    f.st = state::runnable;
    f.started = false;
  }
  // Threads run in index order in even blocks and in reverse in odd ones,
  // swapping at every barrier: a read of shared memory that another
  // thread writes without a barrier in between then sees the old value in
  // some block, as it may on a GPU, where warps run in no fixed order.
  unsigned round = block_idx.x + block_idx.y + block_idx.z;
  for (;; ++round) {
    for (unsigned i = 0; i < threads; ++i) {
      const unsigned t = round % 2 == 0 ? i : threads - 1 - i;
      if (r.fibers[t].st != state::runnable)
        continue;
      r.current = t;
      thread_idx = dim3(t % block_dim.x, t / block_dim.x % block_dim.y,
                        t / (block_dim.x * block_dim.y));
      resume(t);
    }
    bool released = false;
    const unsigned wave = warpSize;
    for (unsigned w = 0; w < threads; w += wave)
      released |= release(w, std::min(threads, w + wave), state::warp_barrier);
    if (released || release(0, threads, state::block_barrier))
      continue;
    for (const auto& f : r.fibers)
      if (f.st != state::done) {
        std::fprintf(stderr, "cuda_on_cpu: block (%u, %u, %u) deadlocks: "
                             "its threads wait at barriers that cannot "
                             "release\n",
                     block_idx.x, block_idx.y, block_idx.z);
        std::abort();
      }
    return;
  }
}

/// The value `v` of thread `partner` of this block (a warp-wide exchange).
template <class T> T exchange(T v, unsigned partner) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "shuffle of a wide type");
  auto& r = run();
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  r.slots[r.current] = bits;
  wait(state::warp_barrier);
  bits = r.slots[partner < r.slots.size() ? partner : r.current];
  wait(state::warp_barrier); // every value read before the next write
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

struct launcher {
  dim3 grid, block;
  launcher(dim3 g, dim3 b, size_t = 0, cudaStream_t = nullptr)
      : grid(g), block(b) {}
  template <class F, class... A> void operator()(F kernel, A... args) const {
    grid_dim = grid;
    block_dim = block;
    std::function<void()> body = [&] { kernel(args...); };
    run().body = &body;
    for (unsigned z = 0; z < grid.z; ++z)
      for (unsigned y = 0; y < grid.y; ++y)
        for (unsigned x = 0; x < grid.x; ++x) {
          block_idx = dim3(x, y, z);
          run_block(block.x * block.y * block.z);
        }
  }
};

} // namespace eat_emu

#define threadIdx (eat_emu::thread_idx)
#define blockIdx (eat_emu::block_idx)
#define blockDim (eat_emu::block_dim)
#define gridDim (eat_emu::grid_dim)

inline void __syncthreads() {
  eat_emu::wait(eat_emu::state::block_barrier);
}
inline void __syncwarp(unsigned = 0xffffffffu) {
  eat_emu::wait(eat_emu::state::warp_barrier);
}

template <class T> T __shfl_sync(unsigned, T v, int src, int width = warpSize) {
  unsigned t = eat_emu::run().current;
  unsigned base = t - t % static_cast<unsigned>(width);
  return eat_emu::exchange(v, base + static_cast<unsigned>(src % width));
}
template <class T>
T __shfl_xor_sync(unsigned, T v, int mask, int width = warpSize) {
  unsigned t = eat_emu::run().current;
  unsigned base = t - t % static_cast<unsigned>(width);
  return eat_emu::exchange(
      v, base + ((t - base) ^ static_cast<unsigned>(mask)));
}
template <class T>
T __shfl_down_sync(unsigned, T v, unsigned delta, int width = warpSize) {
  unsigned t = eat_emu::run().current;
  unsigned lane = t % static_cast<unsigned>(width);
  return eat_emu::exchange(
      v, lane + delta < static_cast<unsigned>(width) ? t + delta : t);
}

#if defined(EAT_EMU_HIP)
// HIP's names for the same things, and its shuffle without a mask.
using hipStream_t = void*;
using hipError_t = int;
constexpr hipError_t hipSuccess = 0;
inline hipError_t hipGetLastError() {
  return hipSuccess;
}
inline hipError_t hipMalloc(void** p, size_t bytes) {
  return cudaMalloc(p, bytes);
}
inline hipError_t hipFree(void* p) {
  return cudaFree(p);
}
template <class T> T __shfl_xor(T v, int mask, int width = warpSize) {
  return __shfl_xor_sync(0u, v, mask, width);
}
template <class T> T __shfl(T v, int src, int width = warpSize) {
  return __shfl_sync(0u, v, src, width);
}
#endif

inline float __uint_as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
inline uint32_t __float_as_uint(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

template <class T> T __ldg(const T* p) {
  return *p;
}
inline float __expf(float x) {
  return expf(x);
}
inline float __logf(float x) {
  return logf(x);
}
inline float __fdividef(float a, float b) {
  return a / b;
}
inline float rsqrtf(float x) {
  return 1.0f / sqrtf(x);
}

// bfloat16 (cuda_bf16.h): storage and the conversions the kernels use.
struct __nv_bfloat16 {
  uint16_t bits;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
inline float __bfloat162float(__nv_bfloat16 h) {
  return __uint_as_float(static_cast<uint32_t>(h.bits) << 16);
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return {0x7fc0};
  u += 0x7fffu + ((u >> 16) & 1u);
  return {static_cast<uint16_t>(u >> 16)};
}
inline __nv_bfloat16 __float2bfloat16(float f) {
  return __float2bfloat16_rn(f);
}
inline float2 __bfloat1622float2(__nv_bfloat162 h) {
  return {__bfloat162float(h.x), __bfloat162float(h.y)};
}
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return {__float2bfloat16_rn(a), __float2bfloat16_rn(b)};
}

// half (cuda_fp16.h, hip/hip_fp16.h): storage and conversions, rounded to
// nearest even by GCC's _Float16.
struct __half {
  uint16_t bits;
};
inline float __half2float(__half h) {
  _Float16 f;
  std::memcpy(&f, &h.bits, sizeof(f));
  return static_cast<float>(f);
}
inline __half __float2half_rn(float x) {
  const auto f = static_cast<_Float16>(x);
  __half h;
  std::memcpy(&h.bits, &f, sizeof(f));
  return h;
}
inline __half __float2half(float x) {
  return __float2half_rn(x);
}

// WMMA (mma.h), 16x16x16 with __half inputs and float accumulators, the
// shapes the tensor_core template uses. As on a GPU, each lane holds a
// part of the tile: lane l owns the accumulator elements l + 32i (row
// l / 16 + 2i, column l % 16, i < 8), and loads the rows of A and the
// column of B they need. Fragments are only loaded, filled, multiplied and
// stored (their elements' layout on a GPU is unspecified, so kernels do
// not index them).
namespace nvcuda::wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && K == 16, "only 16x16x16 fragments");
  float v[16][16];
};

namespace detail {
inline int lane() {
  return static_cast<int>(eat_emu::run().current % 32);
}
/// Row of the lane's i-th accumulator element (its column: lane % 16).
inline int row(int i) {
  return lane() / 16 + 2 * i;
}
} // namespace detail

template <class Use, class T, class Layout>
void fill_fragment(fragment<Use, 16, 16, 16, T, Layout>& f, float x) {
  for (auto& r : f.v)
    for (auto& e : r)
      e = x;
}

template <class Use, class Layout>
void load_matrix_sync(fragment<Use, 16, 16, 16, __half, Layout>& f,
                      const __half* p, unsigned ldm) {
  constexpr bool rows = std::is_same<Layout, row_major>::value;
  if constexpr (std::is_same<Use, matrix_a>::value) {
    for (int i = 0; i < 8; ++i) {
      const int r = detail::row(i);
      for (int k = 0; k < 16; ++k)
        f.v[r][k] = __half2float(rows ? p[r * ldm + k] : p[k * ldm + r]);
    }
  } else {
    static_assert(std::is_same<Use, matrix_b>::value, "load of A or B");
    const int c = detail::lane() % 16;
    for (int k = 0; k < 16; ++k)
      f.v[k][c] = __half2float(rows ? p[k * ldm + c] : p[c * ldm + k]);
  }
}

template <class LA, class LB>
void mma_sync(fragment<accumulator, 16, 16, 16, float>& d,
              const fragment<matrix_a, 16, 16, 16, __half, LA>& a,
              const fragment<matrix_b, 16, 16, 16, __half, LB>& b,
              const fragment<accumulator, 16, 16, 16, float>& c) {
  const int col = detail::lane() % 16;
  for (int i = 0; i < 8; ++i) {
    const int r = detail::row(i);
    float sum = c.v[r][col];
    for (int k = 0; k < 16; ++k)
      sum += a.v[r][k] * b.v[k][col];
    d.v[r][col] = sum;
  }
}

inline void store_matrix_sync(float* p,
                              const fragment<accumulator, 16, 16, 16, float>& f,
                              unsigned ldm, layout_t layout) {
  const int col = detail::lane() % 16;
  for (int i = 0; i < 8; ++i) {
    const int r = detail::row(i);
    p[layout == mem_row_major ? r * ldm + col : col * ldm + r] = f.v[r][col];
  }
}
} // namespace nvcuda::wmma

// The kernel's source follows.
