#include "devices/cuda/nvml_clocks.hpp"

#include <dlfcn.h>

namespace eat::devices {

namespace {

// The few NVML declarations used (nvml.h, stable C ABI): return codes are
// ints (0 is NVML_SUCCESS), devices opaque pointers.
using nvml_device = void*;
using init_fn = int (*)();
using shutdown_fn = int (*)();
using by_uuid_fn = int (*)(const char*, nvml_device*);
using clock_fn = int (*)(nvml_device, int, unsigned int*);
using temperature_fn = int (*)(nvml_device, int, unsigned int*);
using reasons_fn = int (*)(nvml_device, unsigned long long*);

constexpr int nvml_clock_sm = 1;
constexpr int nvml_clock_mem = 2;
constexpr int nvml_temperature_gpu = 0;

template<class Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(::dlsym(library, name));
}

} // namespace

std::string throttle_reason_names(unsigned long long mask) {
  static const std::pair<unsigned long long, const char*> names[] = {
    {0x2, "applications_clocks_setting"}, {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"}, {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"}, {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"}, {0x100, "display_clock_setting"}};
  std::string result;
  for (const auto& [bit, name] : names)
    if ((mask & bit) != 0)
      result += (result.empty() ? "" : ", ") + std::string{name};
  return result.empty() ? "none" : result;
}

nvml_clocks::nvml_clocks() {
  library_ = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    error_ = "NVML is not installed (libnvidia-ml.so.1 not found)";
    return;
  }
  auto init = symbol<init_fn>(library_, "nvmlInit_v2");
  if (init == nullptr || init() != 0) {
    error_ = "nvmlInit_v2 failed";
    return;
  }
  initialised_ = true;
}

nvml_clocks::~nvml_clocks() {
  if (initialised_)
    if (auto shutdown = symbol<shutdown_fn>(library_, "nvmlShutdown"))
      shutdown();
  // The library stays loaded: the runner exits right after.
}

std::string nvml_clocks::snapshot(const std::string& uuid) const {
  if (!initialised_)
    return "clocks not recorded: " + error_;
  auto by_uuid = symbol<by_uuid_fn>(library_, "nvmlDeviceGetHandleByUUID");
  auto clock = symbol<clock_fn>(library_, "nvmlDeviceGetClockInfo");
  auto temperature
    = symbol<temperature_fn>(library_, "nvmlDeviceGetTemperature");
  auto reasons
    = symbol<reasons_fn>(library_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (reasons == nullptr)
    reasons = symbol<reasons_fn>(
      library_, "nvmlDeviceGetCurrentClocksThrottleReasons");
  nvml_device dev = nullptr;
  if (by_uuid == nullptr || clock == nullptr
      || by_uuid(uuid.c_str(), &dev) != 0)
    return "clocks not recorded: NVML does not know GPU " + uuid;
  unsigned int sm = 0;
  unsigned int mem = 0;
  unsigned int celsius = 0;
  unsigned long long mask = 0;
  std::string text;
  if (clock(dev, nvml_clock_sm, &sm) == 0)
    text += "SM " + std::to_string(sm) + " MHz";
  if (clock(dev, nvml_clock_mem, &mem) == 0)
    text += ", memory " + std::to_string(mem) + " MHz";
  if (temperature != nullptr
      && temperature(dev, nvml_temperature_gpu, &celsius) == 0)
    text += ", " + std::to_string(celsius) + " C";
  if (reasons != nullptr && reasons(dev, &mask) == 0)
    text += ", throttle reasons: " + throttle_reason_names(mask);
  return text.empty() ? "clocks not recorded: NVML queries failed" : text;
}

} // namespace eat::devices
