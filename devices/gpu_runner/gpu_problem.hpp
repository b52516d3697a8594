// The device buffers of one problem as the GPU harness owns them: one
// allocation per input and one output with poisoned guard zones on both
// sides, to catch kernels that write outside their output. Poison is the
// byte 0xff (every float a NaN no arithmetic produces: 0xffffffff), set with
// an asynchronous memset on the harness's stream.
//
// Owned by the GPU runner's harness; its only thread.

#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "devices/gpu_runner/gpu_api.hpp"
#include "devices/kind.hpp"

namespace eat::devices {

/// Floats in each guard zone around a device output (16 KiB).
constexpr size_t gpu_guard_floats = 4096;

/// Bit pattern of a poisoned float on the device.
constexpr uint32_t gpu_poison_bits = 0xffffffffu;

/// Inputs and a guarded output on the device.
class device_problem {
public:
  /// No buffers; assign one from make().
  device_problem() = default;

  /// Allocates buffers of `sizes` on the GPU of `api`.
  static caf::expected<device_problem> make(
    gpu_api& api, const buffer_sizes& sizes);

  /// Copies host inputs (sizes as allocated) to the device, in place: the
  /// device addresses never change.
  std::string upload(const std::vector<std::vector<float>>& inputs);

  /// Copies element `index` of input `input` from `value`.
  std::string upload_one(size_t input, size_t index, float value);

  /// Poisons the output and both guard zones (asynchronously).
  std::string poison();

  /// Device pointers of the inputs, in ABI order.
  const std::vector<const float*>& inputs() const {
    return input_ptrs_;
  }

  /// Device pointer of the output (past the leading guard zone).
  float* output() const {
    return out_.floats() + gpu_guard_floats;
  }

  size_t output_size() const {
    return output_size_;
  }

  /// Copies the output and its guard zones to `host` (resized to fit).
  std::string download(std::vector<float>& host) const;

  /// True if the inputs on the device still equal `expected`, or why the
  /// comparison could not be made.
  caf::expected<bool> inputs_equal(
    const std::vector<std::vector<float>>& expected) const;

private:
  gpu_api* api_ = nullptr;
  std::vector<device_memory> in_;
  std::vector<const float*> input_ptrs_;
  device_memory out_;
  size_t output_size_ = 0;
};

/// True if the guard zones of a downloaded output (download()) still hold
/// the poison pattern.
bool guard_zones_intact(const std::vector<float>& downloaded);

/// The output part of a downloaded output.
inline const float* output_part(const std::vector<float>& downloaded) {
  return downloaded.data() + gpu_guard_floats;
}

} // namespace eat::devices
