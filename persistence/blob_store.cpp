#include "persistence/blob_store.hpp"

#include <array>
#include <new>

#include <openssl/evp.h>

#include "actors/protocol/error.hpp"

namespace eat::persistence {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

std::string to_hex(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() * 2);
  for (char c : raw) {
    auto b = static_cast<unsigned char>(c);
    out += hex_digits[b >> 4];
    out += hex_digits[b & 0x0f];
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// Returns the 32-byte key named by `hash_hex`.
caf::expected<std::string> key_of(std::string_view hash_hex) {
  auto bad = [&] {
    return make_error(error::invalid_arguments,
      "'" + std::string{hash_hex.substr(0, 80)}
        + "' is not a blob hash: expected 64 hex digits of a SHA-256");
  };
  if (hash_hex.size() != 2 * blob_key_size)
    return bad();
  std::string key(blob_key_size, '\0');
  for (size_t i = 0; i < blob_key_size; ++i) {
    auto hi = hex_value(hash_hex[2 * i]);
    auto lo = hex_value(hash_hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return bad();
    key[i] = static_cast<char>((hi << 4) | lo);
  }
  return key;
}

/// Returns the raw SHA-256 of `bytes`.
std::string digest(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int size = 0;
  // EVP_Digest fails only when OpenSSL cannot allocate its context: that is
  // an out-of-memory condition, reported like one.
  if (EVP_Digest(
        bytes.data(), bytes.size(), md.data(), &size, EVP_sha256(), nullptr)
      != 1)
    throw std::bad_alloc{};
  return std::string{reinterpret_cast<const char*>(md.data()), size};
}

} // namespace

std::string blob_hash(std::string_view bytes) {
  return to_hex(digest(bytes));
}

blob_store::blob_store(store& s) : store_(s) {
  // nop
}

caf::expected<std::string> blob_store::put_in(
  txn& t, std::string_view bytes) const {
  auto blobs = store_.handle(db::blobs);
  auto key = digest(bytes);
  auto existing = t.get(blobs, key);
  if (!existing)
    return existing.error();
  if (!*existing || **existing != bytes) {
    if (auto put = t.put(blobs, key, bytes); !put)
      return put.error();
  }
  return to_hex(key);
}

caf::expected<std::optional<std::string_view>> blob_store::get_in(
  txn& t, std::string_view hash_hex) const {
  auto key = key_of(hash_hex);
  if (!key)
    return key.error();
  return t.get(store_.handle(db::blobs), *key);
}

caf::expected<std::optional<std::string>> blob_store::get(
  std::string_view hash_hex) const {
  using result_type = caf::expected<std::optional<std::string>>;
  return store_.view([&](txn& t) -> result_type {
    auto bytes = get_in(t, hash_hex);
    if (!bytes)
      return bytes.error();
    if (!*bytes)
      return std::optional<std::string>{};
    return std::optional<std::string>{std::string{**bytes}};
  });
}

caf::expected<std::vector<std::string>> blob_store::verify(txn& t) const {
  auto c = t.open_cursor(store_.handle(db::blobs));
  if (!c)
    return c.error();
  std::vector<std::string> problems;
  // Keys are never empty, so a one-byte NUL key sorts first.
  for (auto rec = c->seek(std::string_view{"\0", 1});; rec = c->next()) {
    if (!rec)
      return rec.error();
    if (!*rec)
      break;
    auto [key, bytes] = **rec;
    if (key.size() != blob_key_size) {
      problems.push_back("blob key " + to_hex(key) + " has "
                         + std::to_string(key.size()) + " bytes, expected "
                         + std::to_string(blob_key_size));
      continue;
    }
    if (auto actual = digest(bytes); actual != key)
      problems.push_back("blob " + to_hex(key) + " ("
                         + std::to_string(bytes.size()) + " bytes) hashes to "
                         + to_hex(actual));
  }
  return problems;
}

} // namespace eat::persistence
