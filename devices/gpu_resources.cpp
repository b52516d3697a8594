#include "devices/gpu_resources.hpp"

#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include <cxxabi.h>

namespace eat::devices {

namespace {

/// The kernel's C++ name without its parameters, return type and
/// anonymous namespace: "_Z2tkILi3EEvPf" (void tk<3>(float*)) is "tk<3>".
std::string demangled(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text{
    abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free};
  if (status != 0 || !text)
    return name;
  std::string full = text.get();
  for (std::string anonymous = "(anonymous namespace)::";;) {
    auto at = full.find(anonymous);
    if (at == std::string::npos)
      break;
    full.erase(at, anonymous.size());
  }
  // The parameter list: the parenthesised group that ends the name.
  int depth = 0;
  size_t end = full.size();
  for (size_t i = full.size(); i-- > 0;) {
    if (full[i] == ')')
      ++depth;
    else if (full[i] == '(' && --depth == 0) {
      end = i;
      break;
    }
  }
  // The return type: whatever precedes the last space outside <...>.
  size_t begin = 0;
  depth = 0;
  for (size_t i = 0; i < end; ++i) {
    if (full[i] == '<')
      ++depth;
    else if (full[i] == '>')
      --depth;
    else if (full[i] == ' ' && depth == 0)
      begin = i + 1;
  }
  return full.substr(begin, end - begin);
}

/// The number in front of `unit` in `line` ("256 bytes stack frame"), or
/// "" when `unit` is not there.
std::string number_before(const std::string& line, const std::string& unit) {
  auto at = line.find(unit);
  if (at == std::string::npos)
    return "";
  auto end = line.find_last_not_of(' ', at == 0 ? 0 : at - 1);
  if (end == std::string::npos)
    return "";
  auto begin = line.find_last_not_of("0123456789", end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return begin <= end ? line.substr(begin, end - begin + 1) : "";
}

/// The text between the first `open` after `from` and the next `close`.
std::string between(const std::string& line, const std::string& open,
  const std::string& close, size_t from = 0) {
  auto a = line.find(open, from);
  if (a == std::string::npos)
    return "";
  a += open.size();
  auto b = line.find(close, a);
  return b == std::string::npos ? "" : line.substr(a, b - a);
}

std::string or_zero(const std::string& x) {
  return x.empty() ? "0" : x;
}

/// nvcc: "Compiling entry function 'k' for 'sm_90'", then "Function
/// properties for k" with its stack and spills on the next line, then
/// "Used 40 registers, ..., 4096 bytes smem".
struct ptxas_kernel {
  std::string name;
  std::string arch;
  std::string registers;
  std::string smem;
  std::string stack;
  std::string spill_stores;
  std::string spill_loads;
};

std::vector<std::string> read_ptxas(const std::vector<std::string>& lines) {
  std::vector<ptxas_kernel> kernels;
  ptxas_kernel* properties_of = nullptr;
  for (const auto& line : lines) {
    if (properties_of != nullptr
        && line.find("stack frame") != std::string::npos) {
      properties_of->stack = number_before(line, " bytes stack frame");
      properties_of->spill_stores = number_before(line, " bytes spill stores");
      properties_of->spill_loads = number_before(line, " bytes spill loads");
      properties_of = nullptr;
      continue;
    }
    properties_of = nullptr;
    if (line.find("ptxas info") == std::string::npos)
      continue;
    if (auto name = between(line, "Compiling entry function '", "'");
        !name.empty()) {
      kernels.push_back(
        {name, between(line, "' for '", "'"), "", "", "", "", ""});
    } else if (auto at = line.find("Function properties for ");
               at != std::string::npos) {
      auto name = line.substr(at + 24);
      if (!kernels.empty() && kernels.back().name == name)
        properties_of = &kernels.back();
    } else if (line.find("Used ") != std::string::npos && !kernels.empty()) {
      kernels.back().registers = number_before(line, " registers");
      kernels.back().smem = number_before(line, " bytes smem");
    }
  }
  std::vector<std::string> out;
  for (const auto& k : kernels) {
    if (k.registers.empty())
      continue;
    out.push_back(
      demangled(k.name) + (k.arch.empty() ? "" : " (" + k.arch + ")") + ": "
      + k.registers + " registers, " + or_zero(k.smem) + " B shared, "
      + or_zero(k.stack) + " B stack, " + or_zero(k.spill_stores)
      + " B spill stores, " + or_zero(k.spill_loads) + " B spill loads");
  }
  return out;
}

/// hipcc: "remark: Function Name: k", then "remark:     KEY: VALUE" lines.
std::vector<std::string> read_remarks(const std::vector<std::string>& lines) {
  std::vector<std::pair<std::string, std::map<std::string, std::string>>>
    kernels;
  const std::string tag = "[-Rpass-analysis=kernel-resource-usage]";
  for (const auto& line : lines) {
    auto end = line.find(tag);
    auto at = line.find("remark: ");
    if (end == std::string::npos || at == std::string::npos || at > end)
      continue;
    auto text = line.substr(at + 8, end - at - 8);
    auto first = text.find_first_not_of(' ');
    if (first == std::string::npos)
      continue;
    text = text.substr(first, text.find_last_not_of(' ') - first + 1);
    auto colon = text.rfind(": ");
    if (colon == std::string::npos)
      continue;
    auto key = text.substr(0, colon);
    auto value = text.substr(colon + 2);
    if (key == "Function Name")
      kernels.push_back({value, {}});
    else if (!kernels.empty())
      kernels.back().second[key] = value;
  }
  std::vector<std::string> out;
  for (auto& [name, facts] : kernels) {
    if (facts.count("VGPRs") == 0)
      continue;
    auto get = [&](const char* key) {
      return or_zero(facts[key]);
    };
    out.push_back(demangled(name) + ": " + get("VGPRs") + " VGPRs, "
                  + get("AGPRs") + " AGPRs, " + get("SGPRs") + " SGPRs, "
                  + get("LDS Size [bytes/block]") + " B LDS, "
                  + get("ScratchSize [bytes/lane]") + " B scratch per lane, "
                  + get("VGPRs Spill") + " VGPR and " + get("SGPRs Spill")
                  + " SGPR spills, occupancy " + get("Occupancy [waves/SIMD]")
                  + " waves per SIMD");
  }
  return out;
}

} // namespace

std::vector<std::string> kernel_resources(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in{log};
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  auto out = read_ptxas(lines);
  for (auto& line : read_remarks(lines))
    out.push_back(std::move(line));
  return out;
}

} // namespace eat::devices
