// Element types of the harness's typed buffers (docs/harness.md, "Element
// types"): their names as FlashInfer-Bench writes them, sizes, conversions
// to and from double, and the poison pattern written into outputs before
// each call. bfloat16 is stored as the top 16 bits of a float32 and float16
// as an IEEE binary16, both in uint16_t.
//
// Plain values and pure functions; any thread.

#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace eat::devices {

/// The element types the harness knows.
enum class dtype : uint8_t { float32, float16, bfloat16, int32, int64 };

/// Returns the dtype called `name` ("float32", "float16", "bfloat16",
/// "int32", "int64"), or nothing.
std::optional<dtype> parse_dtype(std::string_view name);

/// Returns the dtype names, comma-separated, for messages.
std::string dtype_names();

/// Returns the name of `t`, e.g. "bfloat16".
const char* to_string(dtype t);

/// Returns the bytes of one element.
size_t size_of(dtype t);

/// True for float32, float16 and bfloat16.
bool is_floating(dtype t);

/// Default tolerance of outputs of type `t` (BENCHMARK-PROTOCOL.md, 2):
/// 1e-4 for float32, 1e-2 for float16 and bfloat16, 0 (exact) for integers.
double default_tolerance(dtype t);

/// Returns element `i` of `data` (of type `t`) as a double.
double load_as_double(dtype t, const void* data, size_t i);

/// Stores `x` as element `i` of `data`, rounded to nearest even for the
/// narrow floats and truncated toward zero for integers.
void store_from_double(dtype t, void* data, size_t i, double x);

/// Returns the bits of the poison pattern of one element of type `t`, in
/// its low size_of(t) bytes: a NaN no arithmetic produces by accident for
/// the floats (0x7fa5a5a5, 0x7ea5, 0x7fa5), a sentinel for the integers
/// (0x7fa5a5a5, 0x7fa5a5a5a5a5a5a5) that the harness checks.
uint64_t poison_pattern(dtype t);

/// Converts a float to bfloat16 bits, rounding to nearest even (NaN stays
/// NaN).
uint16_t float_to_bfloat16(float x);

/// Converts bfloat16 bits to a float (exact).
float bfloat16_to_float(uint16_t bits);

/// Converts a float to IEEE binary16 bits, rounding to nearest even.
uint16_t float_to_half(float x);

/// Converts IEEE binary16 bits to a float (exact).
float half_to_float(uint16_t bits);

} // namespace eat::devices
