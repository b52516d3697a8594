#include "devices/kinds/dtype.hpp"

#include <cmath>
#include <cstring>

namespace eat::devices {

namespace {

struct dtype_info {
  dtype type;
  const char* name;
  size_t size;
};

constexpr dtype_info infos[] = {
  {dtype::float32, "float32", 4},
  {dtype::float16, "float16", 2},
  {dtype::bfloat16, "bfloat16", 2},
  {dtype::int32, "int32", 4},
  {dtype::int64, "int64", 8},
};

const dtype_info& info(dtype t) {
  return infos[static_cast<size_t>(t)];
}

uint32_t float_bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

float bits_float(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

} // namespace

std::optional<dtype> parse_dtype(std::string_view name) {
  for (const auto& i : infos)
    if (name == i.name)
      return i.type;
  return std::nullopt;
}

std::string dtype_names() {
  std::string result;
  for (const auto& i : infos)
    result += (result.empty() ? "" : ", ") + std::string{i.name};
  return result;
}

const char* to_string(dtype t) {
  return info(t).name;
}

size_t size_of(dtype t) {
  return info(t).size;
}

bool is_floating(dtype t) {
  return t == dtype::float32 || t == dtype::float16 || t == dtype::bfloat16;
}

double default_tolerance(dtype t) {
  switch (t) {
    case dtype::float32: return 1e-4;
    case dtype::float16:
    case dtype::bfloat16: return 1e-2;
    case dtype::int32:
    case dtype::int64: break;
  }
  return 0;
}

double load_as_double(dtype t, const void* data, size_t i) {
  const auto* bytes = static_cast<const unsigned char*>(data) + i * size_of(t);
  switch (t) {
    case dtype::float32: {
      float x;
      std::memcpy(&x, bytes, sizeof(x));
      return x;
    }
    case dtype::float16:
    case dtype::bfloat16: {
      uint16_t bits;
      std::memcpy(&bits, bytes, sizeof(bits));
      return t == dtype::float16 ? half_to_float(bits)
                                 : bfloat16_to_float(bits);
    }
    case dtype::int32: {
      int32_t x;
      std::memcpy(&x, bytes, sizeof(x));
      return x;
    }
    case dtype::int64: break;
  }
  int64_t x;
  std::memcpy(&x, bytes, sizeof(x));
  return static_cast<double>(x);
}

void store_from_double(dtype t, void* data, size_t i, double x) {
  auto* bytes = static_cast<unsigned char*>(data) + i * size_of(t);
  switch (t) {
    case dtype::float32: {
      auto f = static_cast<float>(x);
      std::memcpy(bytes, &f, sizeof(f));
      return;
    }
    case dtype::float16:
    case dtype::bfloat16: {
      auto f = static_cast<float>(x);
      auto bits = t == dtype::float16 ? float_to_half(f) : float_to_bfloat16(f);
      std::memcpy(bytes, &bits, sizeof(bits));
      return;
    }
    case dtype::int32: {
      auto v = static_cast<int32_t>(x);
      std::memcpy(bytes, &v, sizeof(v));
      return;
    }
    case dtype::int64: break;
  }
  auto v = static_cast<int64_t>(x);
  std::memcpy(bytes, &v, sizeof(v));
}

uint64_t poison_pattern(dtype t) {
  switch (t) {
    case dtype::float32:
    case dtype::int32: return 0x7fa5a5a5u;
    case dtype::float16: return 0x7ea5u;
    case dtype::bfloat16: return 0x7fa5u;
    case dtype::int64: break;
  }
  return 0x7fa5a5a5a5a5a5a5ull;
}

uint16_t float_to_bfloat16(float x) {
  auto bits = float_bits(x);
  if (std::isnan(x))
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  auto rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float bfloat16_to_float(uint16_t bits) {
  return bits_float(uint32_t{bits} << 16);
}

uint16_t float_to_half(float x) {
  auto bits = float_bits(x);
  auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  auto abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) // NaN: keep it quiet
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) // rounds to or beyond 65520: infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) { // below 2^-14: subnormal half (or zero)
    // Scale by 2^24 so that one half subnormal step is one unit, then round
    // to nearest even with the float unit's own rounding.
    auto scaled = std::nearbyint(static_cast<double>(bits_float(abs)) * 0x1p24);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(scaled));
  }
  auto mantissa_odd = (abs >> 13) & 1u;
  abs += 0xfffu + mantissa_odd;
  return static_cast<uint16_t>(sign | ((abs - 0x38000000u) >> 13));
}

float half_to_float(uint16_t bits) {
  auto sign = (uint32_t{bits} & 0x8000u) << 16;
  auto exponent = (bits >> 10) & 0x1fu;
  auto mantissa = uint32_t{bits} & 0x3ffu;
  if (exponent == 0) {
    auto magnitude = static_cast<float>(std::ldexp(mantissa, -24));
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 0x1f)
    return bits_float(sign | 0x7f800000u | (mantissa << 13));
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

} // namespace eat::devices
