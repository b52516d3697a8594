#include "devices/sha256.hpp"

#include <array>
#include <new>

#include <openssl/evp.h>

namespace eat::devices {

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  // EVP_Digest fails only when OpenSSL cannot allocate its context: that is
  // an out-of-memory condition, reported like one.
  if (EVP_Digest(
        bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr)
      != 1)
    throw std::bad_alloc{};
  static constexpr char hex[] = "0123456789abcdef";
  std::string result;
  result.reserve(size * 2);
  for (unsigned int i = 0; i < size; ++i) {
    result += hex[digest[i] >> 4];
    result += hex[digest[i] & 0x0f];
  }
  return result;
}

} // namespace eat::devices
