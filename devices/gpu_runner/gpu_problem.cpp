#include "devices/gpu_runner/gpu_problem.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "actors/protocol/error.hpp"
#include "devices/kinds/uniform_fill.hpp"

namespace eat::devices {

namespace {

/// Device allocations are never empty: a 0-element tensor still gets a
/// valid, distinct pointer.
constexpr size_t min_allocation = 256;

/// Fills `n` bytes at `out` with the poison of elements of type `t`.
void fill_poison(dtype t, std::byte* out, size_t n) {
  if (poisoned_by_memset(t)) {
    std::memset(out, 0xff, n);
    return;
  }
  auto pattern = poison_pattern(t);
  auto size = size_of(t);
  for (size_t i = 0; i < n; ++i)
    std::memcpy(out + i, reinterpret_cast<const std::byte*>(&pattern) + i % size,
      1);
}

} // namespace

bool poisoned_by_memset(dtype t) {
  return is_floating(t);
}

guarded_bytes poison_image(dtype t, size_t elements) {
  guarded_bytes image(elements * size_of(t) + 2 * gpu_guard_bytes);
  fill_poison(t, image.data(), image.size());
  return image;
}

bool guard_zones_intact(dtype t, const guarded_bytes& downloaded) {
  if (downloaded.size() < 2 * gpu_guard_bytes)
    return false;
  guarded_bytes zone(gpu_guard_bytes);
  fill_poison(t, zone.data(), zone.size());
  // The trailing zone starts at a whole number of elements, so its pattern
  // is in phase with the leading one (zones are multiples of 8 bytes).
  return std::memcmp(downloaded.data(), zone.data(), zone.size()) == 0
         && std::memcmp(downloaded.data() + downloaded.size() - zone.size(),
              zone.data(), zone.size())
              == 0;
}

std::vector<fill_case> fill_cases(const std::vector<problem>& problems) {
  std::vector<fill_case> cases;
  auto add = [&](fill_case c) {
    if (std::find(cases.begin(), cases.end(), c) == cases.end())
      cases.push_back(c);
  };
  for (auto t : {dtype::float32, dtype::float16, dtype::bfloat16})
    for (auto [lo, hi] :
      {std::pair{-1.0, 1.0}, std::pair{0.001, 6.5}, std::pair{-1e-4, 1e-4}})
      add({t, lo, hi});
  for (const auto& p : problems)
    for (size_t i = 0; i < p.inputs().size(); ++i)
      if (auto range = p.redraw_range(i))
        add({p.inputs()[i].type, range->first, range->second});
  return cases;
}

std::string check_device_fill(
  gpu_api& api, const std::vector<fill_case>& cases) {
  // Odd, so that no buffer is a whole number of blocks.
  constexpr size_t count = 70'001;
  constexpr uint64_t seed = 0x9e37'79b9'7f4a'7c15;
  auto mem = device_memory::make(api, count * sizeof(float));
  if (!mem)
    return "the GPU's draw of inputs could not be checked: "
           + render(mem.error());
  std::vector<std::byte> got;
  std::vector<std::byte> want;
  for (const auto& c : cases) {
    auto bytes = count * size_of(c.type);
    got.resize(bytes);
    want.resize(bytes);
    auto why
      = api.fill_uniform_async(mem->get(), c.type, count, c.lo, c.hi, seed);
    if (why.empty())
      why = api.synchronize();
    if (why.empty())
      why = api.to_host(got.data(), mem->get(), bytes);
    if (!why.empty())
      return "the GPU's draw of inputs could not be checked: " + why;
    fill_uniform(c.type, want.data(), count, c.lo, c.hi, seed);
    auto at = std::mismatch(got.begin(), got.end(), want.begin());
    if (at.first == got.end())
      continue;
    auto i = static_cast<size_t>(at.first - got.begin()) / size_of(c.type);
    char range[64];
    std::snprintf(range, sizeof(range), "%g and %g", c.lo, c.hi);
    return std::string{"the GPU draws other "} + to_string(c.type)
           + " inputs than the host does (element " + std::to_string(i)
           + " of a draw between " + range
           + "), so its timed inputs cannot be checked: a fault of eat's "
             "fill kernel or of the compiler that built it, not of the "
             "kernel evaluated";
  }
  return {};
}

caf::expected<device_problem> device_problem::make(
  gpu_api& api, const problem& p) {
  device_problem result;
  result.api_ = &api;
  for (const auto& t : p.inputs()) {
    auto bytes = std::max(t.elements * size_of(t.type), min_allocation);
    auto mem = device_memory::make(api, bytes);
    if (!mem)
      return std::move(mem.error());
    result.input_ptrs_.push_back(mem->get());
    result.in_.push_back(std::move(*mem));
  }
  for (const auto& t : p.outputs()) {
    auto mem = device_memory::make(
      api, t.elements * size_of(t.type) + 2 * gpu_guard_bytes);
    if (!mem)
      return std::move(mem.error());
    result.output_ptrs_.push_back(
      static_cast<std::byte*>(mem->get()) + gpu_guard_bytes);
    result.out_.push_back(std::move(*mem));
    result.out_types_.push_back(t.type);
    result.images_.push_back(poisoned_by_memset(t.type)
                               ? guarded_bytes{}
                               : poison_image(t.type, t.elements));
  }
  return result;
}

std::string device_problem::upload(const std::vector<typed_buffer>& inputs) {
  for (size_t i = 0; i < in_.size(); ++i)
    if (inputs[i].bytes() > 0)
      if (auto why
          = api_->to_device(in_[i].get(), inputs[i].data(), inputs[i].bytes());
          !why.empty())
        return why;
  return {};
}

std::string device_problem::redraw(const problem& p, uint64_t seed) {
  for (size_t i = 0; i < in_.size(); ++i)
    if (auto range = p.redraw_range(i))
      if (auto why = api_->fill_uniform_async(in_[i].get(), p.inputs()[i].type,
            p.inputs()[i].elements, range->first, range->second,
            problem::redraw_seed(seed, i));
          !why.empty())
        return why;
  return {};
}

std::string device_problem::poison() {
  for (size_t o = 0; o < out_.size(); ++o) {
    auto why = images_[o].empty()
                 ? api_->fill_async(out_[o].get(), 0xff, out_[o].bytes())
                 : api_->to_device(
                   out_[o].get(), images_[o].data(), images_[o].size());
    if (!why.empty())
      return why;
  }
  return {};
}

std::string device_problem::download(std::vector<guarded_bytes>& host) const {
  host.resize(out_.size());
  for (size_t o = 0; o < out_.size(); ++o) {
    host[o].resize(out_[o].bytes());
    if (auto why = api_->to_host(host[o].data(), out_[o].get(), out_[o].bytes());
        !why.empty())
      return why;
  }
  return {};
}

std::string device_problem::download_inputs(
  const problem& p, std::vector<std::vector<std::byte>>& host) const {
  host.resize(in_.size());
  for (size_t i = 0; i < in_.size(); ++i) {
    host[i].resize(p.inputs()[i].elements * size_of(p.inputs()[i].type));
    if (host[i].empty())
      continue;
    if (auto why = api_->to_host(host[i].data(), in_[i].get(), host[i].size());
        !why.empty())
      return why;
  }
  return {};
}

caf::expected<bool> device_problem::inputs_equal(
  const std::vector<typed_buffer>& expected) const {
  std::vector<std::byte> copy;
  for (size_t i = 0; i < in_.size(); ++i) {
    copy.resize(expected[i].bytes());
    if (copy.empty())
      continue;
    if (auto why = api_->to_host(copy.data(), in_[i].get(), copy.size());
        !why.empty())
      return make_error(error::runner_failed, why);
    if (std::memcmp(copy.data(), expected[i].data(), copy.size()) != 0)
      return false;
  }
  return true;
}

} // namespace eat::devices
