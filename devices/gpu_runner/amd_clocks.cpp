#include "devices/gpu_runner/amd_clocks.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

namespace eat::devices {

namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in{path};
  if (!in)
    return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

/// "45 C (edge)" from the hwmon folder of `device`: the sensor labelled
/// edge, else junction, else the first; "" without one.
std::string temperature(const fs::path& device) {
  std::error_code ec;
  std::optional<std::pair<long, std::string>> found[3];
  for (const auto& hwmon : fs::directory_iterator{device / "hwmon", ec}) {
    for (int i = 1; i <= 8; ++i) {
      auto base = hwmon.path() / ("temp" + std::to_string(i));
      auto value = read_text(base.string() + "_input");
      if (!value)
        continue;
      char* end = nullptr;
      long milli = std::strtol(value->c_str(), &end, 10);
      if (end == value->c_str())
        continue;
      auto label = trimmed(read_text(base.string() + "_label").value_or(""));
      int rank = label == "edge" ? 0 : label == "junction" ? 1 : 2;
      if (!found[rank])
        found[rank] = {milli, label};
    }
  }
  for (const auto& f : found)
    if (f) {
      auto text = std::to_string((f->first + 500) / 1000) + " C";
      return f->second.empty() ? text : text + " (" + f->second + ")";
    }
  return {};
}

} // namespace

long current_dpm_mhz(const std::string& text) {
  std::istringstream lines{text};
  for (std::string line; std::getline(lines, line);) {
    if (line.find('*') == std::string::npos)
      continue;
    auto colon = line.find(':');
    if (colon == std::string::npos)
      return -1;
    char* end = nullptr;
    const char* start = line.c_str() + colon + 1;
    long mhz = std::strtol(start, &end, 10);
    return end != start && mhz >= 0 ? mhz : -1;
  }
  return -1;
}

std::string amd_clock_snapshot(
  const std::string& pci, const std::string& sysfs) {
  auto device = fs::path{sysfs} / "bus/pci/devices" / pci;
  std::error_code ec;
  if (!fs::exists(device, ec))
    return "clocks not recorded: no " + device.string();
  std::string out;
  auto add = [&](const std::string& part) {
    if (!part.empty())
      out += (out.empty() ? "" : ", ") + part;
  };
  for (auto [file, name] :
    {std::pair{"pp_dpm_sclk", "SCLK"}, std::pair{"pp_dpm_mclk", "MCLK"}}) {
    auto text = read_text(device / file);
    long mhz = text ? current_dpm_mhz(*text) : -1;
    if (mhz >= 0)
      add(std::string{name} + " " + std::to_string(mhz) + " MHz");
  }
  add(temperature(device));
  if (out.empty())
    return "clocks not recorded: " + device.string()
           + " has no readable pp_dpm_sclk, pp_dpm_mclk or hwmon temperature"
             " (not an amdgpu device?)";
  return out + "; throttle reasons not read";
}

} // namespace eat::devices
