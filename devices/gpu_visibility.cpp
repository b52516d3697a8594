#include "devices/gpu_visibility.hpp"

#include "actors/protocol/error.hpp"

namespace eat::devices {

namespace {

/// The comma-separated entries of `list`, spaces around each removed.
std::vector<std::string> entries_of(const std::string& list) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= list.size()) {
    auto comma = list.find(',', from);
    auto entry = list.substr(
      from, comma == std::string::npos ? std::string::npos : comma - from);
    auto first = entry.find_first_not_of(' ');
    auto last = entry.find_last_not_of(' ');
    out.push_back(first == std::string::npos
                    ? std::string{}
                    : entry.substr(first, last - first + 1));
    if (comma == std::string::npos)
      break;
    from = comma + 1;
  }
  return out;
}

} // namespace

caf::expected<std::vector<std::string>> only_gpu_environment(
  const std::string& backend, int index, const env_lookup& get) {
  if (backend != "cuda" && backend != "hip")
    return make_error(
      error::invalid_config, "unknown GPU backend '" + backend + "'");
  if (index < 0)
    return make_error(error::invalid_config,
      "GPU index " + std::to_string(index) + " is negative");
  const char* name = "CUDA_VISIBLE_DEVICES";
  const char* list = get(name);
  if (backend == "hip")
    if (const char* hip = get("HIP_VISIBLE_DEVICES"); hip != nullptr) {
      name = "HIP_VISIBLE_DEVICES";
      list = hip;
    }
  auto entry = std::to_string(index);
  if (list != nullptr) {
    auto entries = entries_of(list);
    if (static_cast<size_t>(index) >= entries.size()
        || entries[static_cast<size_t>(index)].empty())
      return make_error(error::invalid_config,
        std::string{name} + "=" + list + " has no entry for GPU "
          + std::to_string(index) + " of the runtime");
    entry = entries[static_cast<size_t>(index)];
  }
  if (backend == "cuda")
    return std::vector<std::string>{"CUDA_VISIBLE_DEVICES=" + entry};
  return std::vector<std::string>{
    "HIP_VISIBLE_DEVICES=" + entry, "CUDA_VISIBLE_DEVICES"};
}

} // namespace eat::devices
