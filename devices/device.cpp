#include "devices/device.hpp"

namespace eat::devices {

device::~device() {
  // nop
}

} // namespace eat::devices
