#include "devices/runner/timed_sample.hpp"

#include <algorithm>
#include <cstring>

#include "devices/runner/checks.hpp"

namespace eat::devices {

namespace {

std::vector<size_t> byte_sizes(const std::vector<tensor_layout>& tensors) {
  std::vector<size_t> out;
  for (const auto& t : tensors)
    out.push_back(t.elements * size_of(t.type));
  return out;
}

void copy_into(std::vector<std::vector<std::byte>>& to,
  const std::vector<size_t>& sizes, const void* const* from) {
  to.resize(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    to[i].resize(sizes[i]);
    if (sizes[i] > 0)
      std::memcpy(to[i].data(), from[i], sizes[i]);
  }
}

} // namespace

timed_sample::timed_sample(const problem& p, size_t slots)
  : input_bytes_(byte_sizes(p.inputs())),
    output_bytes_(byte_sizes(p.outputs())), slots_(slots) {
  // nop
}

std::optional<size_t> timed_sample::draw(secret_rng& gen) {
  if (slots_.empty()) {
    ++offered_;
    return std::nullopt;
  }
  return choose(gen.below(offered_ + 1));
}

std::optional<size_t> timed_sample::choose(uint64_t r) {
  ++offered_;
  if (offered_ <= slots_.size())
    return static_cast<size_t>(offered_ - 1);
  if (r < slots_.size())
    return static_cast<size_t>(r);
  return std::nullopt;
}

void timed_sample::keep(
  size_t slot, const void* const* inputs, const void* const* outputs) {
  auto& k = slots_.at(slot);
  k.offer = offered_;
  copy_into(k.inputs, input_bytes_, inputs);
  copy_into(k.outputs, output_bytes_, outputs);
}

size_t timed_sample::kept() const {
  return static_cast<size_t>(
    std::count_if(slots_.begin(), slots_.end(), [](const kept_call& k) {
      return k.offer != 0;
    }));
}

std::string timed_sample::check(
  const problem& p, void* reference, const code_lock& code) const {
  std::vector<std::vector<double>> ref;
  std::vector<double*> ref_ptrs;
  for (const auto& t : p.outputs())
    ref.emplace_back(t.elements, 0.0);
  for (auto& r : ref)
    ref_ptrs.push_back(r.data());
  for (const auto& k : slots_) {
    if (k.offer == 0)
      continue;
    std::vector<const void*> in;
    for (const auto& b : k.inputs)
      in.push_back(b.data());
    if (auto why = code.unlock(); !why.empty())
      return "reference: " + why;
    p.call_reference(reference, in.data(), ref_ptrs.data());
    if (auto why = code.lock(); !why.empty())
      return "reference: " + why;
    for (size_t o = 0; o < p.outputs().size(); ++o) {
      const auto& t = p.outputs()[o];
      auto cmp = compare_outputs(
        t.type, k.outputs[o].data(), ref[o].data(), t.elements, t.tol);
      if (!cmp.ok)
        return "timed output " + std::to_string(k.offer) + " of "
               + std::to_string(offered_) + ", one of a secret sample of "
               + std::to_string(kept())
               + " compared with the reference after the timing: "
               + describe(cmp, p.element_name(o, cmp.index));
    }
  }
  return {};
}

size_t sample_slots(size_t wanted, uint64_t set_bytes, uint64_t budget) {
  if (wanted == 0)
    return 0;
  auto fit = set_bytes == 0 ? wanted : budget / set_bytes;
  return static_cast<size_t>(
    std::max<uint64_t>(1, std::min<uint64_t>(wanted, fit)));
}

} // namespace eat::devices
