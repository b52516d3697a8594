// Specification of the HIP runner's record of an AMD GPU's clocks
// (devices/gpu_runner/amd_clocks.hpp), read from a tree laid out as the
// amdgpu driver's sysfs files. On a machine with an AMD GPU the runner
// reads /sys itself; none has been at hand.

#include <fstream>

#include <catch2/catch.hpp>

#include "devices/gpu_runner/amd_clocks.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat::devices;

namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream{path} << text;
}

/// The PCI device folder of GPU `pci` under `root`.
fs::path device_at(const scratch_dir& root, const std::string& pci) {
  auto dir = root.path() / "bus/pci/devices" / pci;
  fs::create_directories(dir);
  return dir;
}

} // namespace

TEST_CASE("an AMD GPU's record names its current shader and memory clocks "
          "and its edge temperature") {
  auto root = test::make_temp_dir();
  auto gpu = device_at(root, "0000:c1:00.0");
  write(gpu / "pp_dpm_sclk", "0: 500Mhz \n1: 1700Mhz *\n2: 2100Mhz \n");
  write(gpu / "pp_dpm_mclk", "0: 400Mhz \n1: 1600Mhz *\n");
  write(gpu / "hwmon/hwmon3/temp2_input", "51000\n");
  write(gpu / "hwmon/hwmon3/temp2_label", "junction\n");
  write(gpu / "hwmon/hwmon3/temp1_input", "44600\n");
  write(gpu / "hwmon/hwmon3/temp1_label", "edge\n");
  // Another GPU's files are not read.
  write(device_at(root, "0000:c2:00.0") / "pp_dpm_sclk", "0: 900Mhz *\n");
  CHECK(amd_clock_snapshot("0000:c1:00.0", root.path().string())
        == "SCLK 1700 MHz, MCLK 1600 MHz, 45 C (edge); throttle reasons not "
           "read");
}

TEST_CASE("an AMD GPU without an edge sensor is recorded at its junction "
          "and what it lacks is left out") {
  // An MI300X: no edge sensor, and its shader clock in deep sleep ("S").
  auto root = test::make_temp_dir();
  auto gpu = device_at(root, "0000:05:00.0");
  write(gpu / "pp_dpm_sclk", "S: 100Mhz *\n0: 500Mhz \n1: 2100Mhz \n");
  write(gpu / "hwmon/hwmon0/temp2_input", "38000\n");
  write(gpu / "hwmon/hwmon0/temp2_label", "junction\n");
  write(gpu / "hwmon/hwmon0/temp3_input", "36000\n");
  write(gpu / "hwmon/hwmon0/temp3_label", "mem\n");
  CHECK(amd_clock_snapshot("0000:05:00.0", root.path().string())
        == "SCLK 100 MHz, 38 C (junction); throttle reasons not read");
}

TEST_CASE("an AMD GPU whose files cannot be read says its clocks were not "
          "recorded and why") {
  auto root = test::make_temp_dir();
  auto missing = amd_clock_snapshot("0000:09:00.0", root.path().string());
  CHECK_THAT(missing, Catch::StartsWith("clocks not recorded: no "));
  CHECK_THAT(missing, Catch::EndsWith("bus/pci/devices/0000:09:00.0"));
  device_at(root, "0000:0a:00.0");
  auto bare = amd_clock_snapshot("0000:0a:00.0", root.path().string());
  CHECK_THAT(bare, Catch::StartsWith("clocks not recorded: "));
  CHECK_THAT(bare, Catch::Contains("has no readable pp_dpm_sclk, pp_dpm_mclk "
                                   "or hwmon temperature"));
}

TEST_CASE("the current level of a DPM file is the line marked with a star") {
  CHECK(current_dpm_mhz("0: 500Mhz \n1: 2100Mhz *\n") == 2100);
  CHECK(current_dpm_mhz("0: 500Mhz *\n1: 2100Mhz \n") == 500);
  CHECK(current_dpm_mhz("0: 500Mhz \n1: 2100Mhz \n") == -1);
  CHECK(current_dpm_mhz("") == -1);
  CHECK(current_dpm_mhz("garbage *\n") == -1);
  CHECK(current_dpm_mhz("1: fast *\n") == -1);
}
