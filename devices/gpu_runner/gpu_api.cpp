#include "devices/gpu_runner/gpu_api.hpp"

#include <utility>

namespace eat::devices {

gpu_api::~gpu_api() {
  // nop
}

device_memory::device_memory(device_memory&& other) noexcept
  : api_(other.api_), ptr_(std::exchange(other.ptr_, nullptr)),
    bytes_(std::exchange(other.bytes_, 0)) {
  // nop
}

device_memory& device_memory::operator=(device_memory&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr)
      api_->release(ptr_);
    api_ = other.api_;
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

device_memory::~device_memory() {
  if (ptr_ != nullptr)
    api_->release(ptr_);
}

caf::expected<device_memory> device_memory::make(gpu_api& api, size_t bytes) {
  auto ptr = api.allocate(bytes);
  if (!ptr)
    return std::move(ptr.error());
  return device_memory{api, *ptr, bytes};
}

} // namespace eat::devices
