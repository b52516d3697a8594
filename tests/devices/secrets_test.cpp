// Specification of what a runner keeps from a kernel in a process of its
// own (devices/runner/secrets.hpp): the keyed hash and the encryption of
// the baseline's outputs.

#include <cstdint>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "devices/runner/checks.hpp"
#include "devices/runner/secrets.hpp"

using namespace eat::devices;

TEST_CASE("the keyed hash depends on its key, and a change that keeps "
          "hash_buffers' unkeyed hash does not keep it") {
  std::vector<typed_buffer> inputs;
  inputs.emplace_back(dtype::float32, 64);
  for (size_t i = 0; i < 64; ++i)
    inputs[0].set(i, static_cast<double>(i) * 0.25);
  auto key = random_secret_key();
  auto keyed = keyed_hash(key, inputs);
  auto unkeyed = hash_buffers(inputs);
  auto other = key;
  other[0] ^= 1;
  CHECK(keyed_hash(other, inputs) != keyed);
  // hash_buffers mixes 8-byte words in four chains, word i in chain i % 4:
  // chain 0's state after word 0 decides word 4's effect. Changing word 0
  // and choosing word 4 to reach the old state after it keeps the unkeyed
  // hash, as a kernel that knows the function could.
  auto* words = static_cast<uint64_t*>(inputs[0].data());
  auto step = [](uint64_t h, uint64_t w) {
    h = (h ^ w) * 0x100000001b3ull;
    return h ^ (h >> 29);
  };
  const uint64_t seed = 0xcbf29ce484222325ull;
  auto old_state = step(step(seed, words[0]), words[4]);
  auto inner = step(seed, words[0] ^ 0x1234);
  // Undo the final xor-shift and multiply to find the word 4 that reaches
  // old_state from `inner`.
  auto unshift = [](uint64_t y) {
    auto x = y;
    for (int i = 0; i < 3; ++i)
      x = y ^ (x >> 29);
    return x;
  };
  uint64_t inverse = 1; // of the odd multiplier, by Newton's iteration
  for (int i = 0; i < 6; ++i)
    inverse *= 2 - 0x100000001b3ull * inverse;
  words[0] ^= 0x1234;
  words[4] = (unshift(old_state) * inverse) ^ inner;
  REQUIRE(step(inner, words[4]) == old_state);
  CHECK(hash_buffers(inputs) == unkeyed);
  CHECK(keyed_hash(key, inputs) != keyed);
}

TEST_CASE("masking twice gives the bytes back, and no two buffers or "
          "generations share keystream") {
  auto key = random_secret_key();
  std::vector<float> plain(1000);
  for (size_t i = 0; i < plain.size(); ++i)
    plain[i] = static_cast<float>(i);
  auto data = plain;
  auto bytes = data.size() * sizeof(float);
  REQUIRE(mask_bytes(key, 0x1000, 3, data.data(), bytes).empty());
  CHECK(std::memcmp(data.data(), plain.data(), bytes) != 0);
  auto masked = data;
  REQUIRE(mask_bytes(key, 0x1000, 3, data.data(), bytes).empty());
  CHECK(std::memcmp(data.data(), plain.data(), bytes) == 0);
  for (auto [address, generation] :
    {std::pair<uint64_t, uint32_t>{0x2000, 3}, {0x1000, 4}}) {
    auto other = plain;
    REQUIRE(mask_bytes(key, address, generation, other.data(), bytes).empty());
    CHECK(std::memcmp(other.data(), masked.data(), bytes) != 0);
  }
}

TEST_CASE("the secret generator gives every instance numbers of its own, "
          "past its pool of 64, and indices below their bound") {
  // Two deterministic generators with one seed would agree on every number.
  secret_rng a;
  secret_rng b;
  size_t same = 0;
  for (int i = 0; i < 200; ++i)
    same += a.next() == b.next() ? 1 : 0;
  CHECK(same == 0);
  std::vector<size_t> counts(3);
  for (int i = 0; i < 3000; ++i) {
    auto x = a.below(3);
    REQUIRE(x < 3);
    ++counts[x];
  }
  // Each a third of 3000, within 10 standard deviations (~26 each).
  for (auto c : counts)
    CHECK((c > 740 && c < 1260));
}
