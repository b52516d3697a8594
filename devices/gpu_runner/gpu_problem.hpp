// The device buffers of one problem as the GPU harness owns them: one
// allocation per input and per output, in ABI order, each output with
// guard zones on both sides to catch kernels that write outside it. The
// layouts (dtype, element count) come from devices/kinds/problem.hpp, the
// same for every kind.
//
// Poison: floating outputs (float32, float16, bfloat16) and their zones are
// filled with the byte 0xff by an asynchronous memset on the harness's
// stream: a negative NaN of every width, which no arithmetic produces (GPU
// arithmetic yields the positive canonical NaN). Integer outputs get the CPU
// harness's sentinel (poison_pattern(), "not written" in messages), copied
// from a host image; integer outputs are rare and small.
//
// Owned by the GPU runner's harness; its only thread.

#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "devices/gpu_runner/gpu_api.hpp"
#include "devices/kinds/problem.hpp"

namespace eat::devices {

/// Bytes in each guard zone around a device output (16 KiB; keeps the
/// output 256-byte aligned).
constexpr size_t gpu_guard_bytes = 16384;

/// An output copied back with its guard zones: zone, data, zone.
using guarded_bytes = std::vector<std::byte>;

/// True if outputs of type `t` are poisoned with the byte 0xff (the
/// floating types) rather than with an uploaded sentinel (the integers).
bool poisoned_by_memset(dtype t);

/// The bytes of a poisoned output of `elements` elements of type `t` with
/// its guard zones, as poison() leaves it on the device.
guarded_bytes poison_image(dtype t, size_t elements);

/// True if the guard zones of a downloaded output of type `t` still hold
/// the poison pattern.
bool guard_zones_intact(dtype t, const guarded_bytes& downloaded);

/// The output part of a downloaded output.
inline const void* output_part(const guarded_bytes& downloaded) {
  return downloaded.data() + gpu_guard_bytes;
}

/// One kind of draw the GPU's fill makes: a floating type and a range.
struct fill_case {
  dtype type = dtype::float32;
  double lo = -1;
  double hi = 1;

  friend bool operator==(const fill_case& x, const fill_case& y) {
    return x.type == y.type && x.lo == y.lo && x.hi == y.hi;
  }
};

/// The draws a timing of `problems` makes of their freely drawn floating
/// inputs, after a fixed set (each floating type in [-1, 1), in
/// [0.001, 6.5) and in [-1e-4, 1e-4), where float16 is subnormal),
/// without repeats.
std::vector<fill_case> fill_cases(const std::vector<problem>& problems);

/// Why the GPU's fill (gpu_api::fill_uniform_async, which draws a set's
/// inputs anew every timed round) does not draw what the host's
/// fill_uniform draws, bit for bit, in one of `cases`, or "". The timing
/// phase checks the device's inputs against the host's draw of the round
/// (docs/harness.md, "CUDA and HIP backends"): where the two differed every
/// kernel would be taken for one that rewrote its inputs. Checked once a
/// runner, before kernel code loads.
std::string check_device_fill(
  gpu_api& api, const std::vector<fill_case>& cases);

/// Inputs and guarded outputs on the device.
class device_problem {
public:
  /// No buffers; assign one from make().
  device_problem() = default;

  /// Allocates the buffers of `p` on the GPU of `api`.
  static caf::expected<device_problem> make(gpu_api& api, const problem& p);

  /// Copies host inputs (as p.make_inputs() drew them) to the device, in
  /// place: the device addresses never change.
  std::string upload(const std::vector<typed_buffer>& inputs);

  /// Draws the inputs anew on the device as `p.redraw(inputs, seed)` draws
  /// them on the host, asynchronously on the stream.
  std::string redraw(const problem& p, uint64_t seed);

  /// Poisons every output and its guard zones (asynchronously for floats).
  std::string poison();

  /// Device pointers of the inputs, in ABI order.
  const std::vector<const void*>& inputs() const {
    return input_ptrs_;
  }

  /// Device pointers of the outputs (past each leading guard zone).
  const std::vector<void*>& outputs() const {
    return output_ptrs_;
  }

  /// Copies every output with its guard zones to `host` (one entry per
  /// output, resized to fit).
  std::string download(std::vector<guarded_bytes>& host) const;

  /// Copies every input of `p` (whose buffers these are) to `host`, one
  /// entry per input, resized to fit.
  std::string download_inputs(
    const problem& p, std::vector<std::vector<std::byte>>& host) const;

  /// True if the inputs on the device still equal `expected`, or why the
  /// comparison could not be made.
  caf::expected<bool> inputs_equal(
    const std::vector<typed_buffer>& expected) const;

private:
  gpu_api* api_ = nullptr;
  std::vector<device_memory> in_;
  std::vector<const void*> input_ptrs_;
  std::vector<device_memory> out_;
  std::vector<void*> output_ptrs_;
  std::vector<dtype> out_types_;
  /// Integer outputs: the image poison() copies; empty for floats.
  std::vector<guarded_bytes> images_;
};

} // namespace eat::devices
