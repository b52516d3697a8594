// SHA-256 of byte strings, as lowercase hex: the source hash of a candidate
// (eval_result::source_hash) and the key of the compiler's .so cache.
// Stateless (OpenSSL EVP underneath); usable from any thread.

#pragma once

#include <string>
#include <string_view>

namespace eat::devices {

/// Returns the hex SHA-256 digest of `bytes` (64 lowercase characters).
std::string sha256_hex(std::string_view bytes);

} // namespace eat::devices
