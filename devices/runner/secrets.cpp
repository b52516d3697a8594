#include "devices/runner/secrets.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <openssl/evp.h>
#include <sys/random.h>

namespace eat::devices {

namespace {

struct cipher_free {
  void operator()(EVP_CIPHER_CTX* ctx) const {
    EVP_CIPHER_CTX_free(ctx);
  }
};

using cipher = std::unique_ptr<EVP_CIPHER_CTX, cipher_free>;

/// OpenSSL takes lengths as int: larger buffers go in pieces of a GiB.
constexpr size_t piece_bytes = size_t{1} << 30;

/// A GMAC context under `key` (AES-128-GCM with only additional data).
cipher start_gmac(const secret_key& key) {
  static const unsigned char iv[12] = {};
  cipher ctx{EVP_CIPHER_CTX_new()};
  if (!ctx
      || EVP_EncryptInit_ex(
           ctx.get(), EVP_aes_128_gcm(), nullptr, key.data(), iv)
           != 1)
    throw std::runtime_error{"keyed_hash: cannot set up AES-128-GCM"};
  return ctx;
}

void add_bytes(EVP_CIPHER_CTX* ctx, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t done = 0; done < size; done += piece_bytes) {
    int out = 0;
    auto n = static_cast<int>(std::min(piece_bytes, size - done));
    if (EVP_EncryptUpdate(ctx, nullptr, &out, p + done, n) != 1)
      throw std::runtime_error{"keyed_hash: AES-128-GCM failed"};
  }
}

uint64_t finish_gmac(EVP_CIPHER_CTX* ctx) {
  unsigned char tag[16];
  int out = 0;
  if (EVP_EncryptFinal_ex(ctx, tag, &out) != 1
      || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, sizeof(tag), tag) != 1)
    throw std::runtime_error{"keyed_hash: AES-128-GCM failed"};
  uint64_t h = 0;
  std::memcpy(&h, tag, sizeof(h));
  return h;
}

/// Fills `bytes` at `data` from the operating system's random source;
/// throws std::runtime_error (naming `what`) if it cannot.
void draw_random(void* data, size_t bytes, const char* what) {
  auto* at = static_cast<unsigned char*>(data);
  size_t got = 0;
  while (got < bytes) {
    auto n = ::getrandom(at + got, bytes - got, 0);
    if (n > 0)
      got += static_cast<size_t>(n);
    else if (n < 0 && errno != EINTR)
      throw std::runtime_error{
        std::string{"cannot draw "} + what + ": " + std::strerror(errno)};
  }
}

} // namespace

secret_key random_secret_key() {
  secret_key key{};
  draw_random(key.data(), key.size(), "a secret key");
  return key;
}

uint64_t secret_rng::next() {
  if (used_ == pool_.size()) {
    draw_random(pool_.data(), sizeof(pool_), "random numbers");
    used_ = 0;
  }
  return pool_[used_++];
}

uint64_t secret_rng::below(uint64_t n) {
  // Lemire's multiply-shift, as rng::below.
  return static_cast<uint64_t>(
    (static_cast<unsigned __int128>(next()) * n) >> 64);
}

uint64_t keyed_hash(const secret_key& key, const void* data, size_t size) {
  auto ctx = start_gmac(key);
  add_bytes(ctx.get(), data, size);
  return finish_gmac(ctx.get());
}

uint64_t keyed_hash(
  const secret_key& key, const std::vector<typed_buffer>& buffers) {
  // The sizes go in too: bytes moved from one buffer to the next count.
  auto ctx = start_gmac(key);
  for (const auto& b : buffers) {
    uint64_t size = b.bytes();
    add_bytes(ctx.get(), &size, sizeof(size));
    add_bytes(ctx.get(), b.data(), b.bytes());
  }
  return finish_gmac(ctx.get());
}

std::string mask_bytes(const secret_key& key, uint64_t address,
  uint32_t generation, void* data, size_t bytes) {
  // The counter block: the address, the generation, then 32 bits of
  // counter (64 GiB of keystream before it could carry into them).
  unsigned char iv[16] = {};
  std::memcpy(iv, &address, 8);
  std::memcpy(iv + 8, &generation, 4);
  cipher ctx{EVP_CIPHER_CTX_new()};
  if (!ctx
      || EVP_EncryptInit_ex(
           ctx.get(), EVP_aes_128_ctr(), nullptr, key.data(), iv)
           != 1)
    return "cannot set up AES-128-CTR";
  auto* p = static_cast<unsigned char*>(data);
  for (size_t done = 0; done < bytes; done += piece_bytes) {
    int out = 0;
    auto n = static_cast<int>(std::min(piece_bytes, bytes - done));
    if (EVP_EncryptUpdate(ctx.get(), p + done, &out, p + done, n) != 1)
      return "AES-128-CTR failed";
  }
  return {};
}

} // namespace eat::devices
