#include "devices/gpu_runner/gpu_problem.hpp"

#include <cstring>

#include "actors/protocol/error.hpp"

namespace eat::devices {

caf::expected<device_problem> device_problem::make(
  gpu_api& api, const buffer_sizes& sizes) {
  device_problem result;
  result.api_ = &api;
  for (auto n : sizes.inputs) {
    auto mem = device_memory::make(api, n * sizeof(float));
    if (!mem)
      return std::move(mem.error());
    result.input_ptrs_.push_back(mem->floats());
    result.in_.push_back(std::move(*mem));
  }
  auto out = device_memory::make(
    api, (sizes.output + 2 * gpu_guard_floats) * sizeof(float));
  if (!out)
    return std::move(out.error());
  result.out_ = std::move(*out);
  result.output_size_ = sizes.output;
  return result;
}

std::string device_problem::upload(
  const std::vector<std::vector<float>>& inputs) {
  for (size_t i = 0; i < in_.size(); ++i)
    if (auto why = api_->to_device(
          in_[i].get(), inputs[i].data(), inputs[i].size() * sizeof(float));
        !why.empty())
      return why;
  return {};
}

std::string device_problem::upload_one(
  size_t input, size_t index, float value) {
  return api_->to_device(in_[input].floats() + index, &value, sizeof(value));
}

std::string device_problem::poison() {
  return api_->fill_async(out_.get(), 0xff, out_.bytes());
}

std::string device_problem::download(std::vector<float>& host) const {
  host.resize(output_size_ + 2 * gpu_guard_floats);
  return api_->to_host(host.data(), out_.get(), out_.bytes());
}

caf::expected<bool> device_problem::inputs_equal(
  const std::vector<std::vector<float>>& expected) const {
  std::vector<float> copy;
  for (size_t i = 0; i < in_.size(); ++i) {
    copy.resize(expected[i].size());
    if (auto why = api_->to_host(
          copy.data(), in_[i].get(), copy.size() * sizeof(float));
        !why.empty())
      return make_error(error::runner_failed, why);
    if (std::memcmp(copy.data(), expected[i].data(),
          copy.size() * sizeof(float))
        != 0)
      return false;
  }
  return true;
}

bool guard_zones_intact(const std::vector<float>& downloaded) {
  auto intact = [](const float* p) {
    for (size_t i = 0; i < gpu_guard_floats; ++i) {
      uint32_t bits;
      std::memcpy(&bits, p + i, sizeof(bits));
      if (bits != gpu_poison_bits)
        return false;
    }
    return true;
  };
  return downloaded.size() >= 2 * gpu_guard_floats
         && intact(downloaded.data())
         && intact(downloaded.data() + downloaded.size() - gpu_guard_floats);
}

} // namespace eat::devices
