// Specification of the protocol's two encodings: CAF's binary serialisation
// (through inspect) and the MessagePack wire format, both derived from one
// field list per struct (EAT_DESCRIBE).

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "actors/protocol/type_ids.hpp"
#include "actors/protocol/wire.hpp"
#include "tests/actors/protocol/samples.hpp"

using namespace eat;

namespace {

/// Serialises and deserialises `x` with CAF's binary format, as messages
/// between nodes of CAF's own remoting would be.
template <class T>
T through_caf(const T& x) {
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  T copy = x;
  REQUIRE(!sink(copy));
  T out;
  caf::binary_deserializer source{nullptr, buf};
  REQUIRE(!source(out));
  return out;
}

template <class T>
T through_msgpack(const T& x) {
  auto out = wire::decode<T>(wire::encode(x));
  REQUIRE(out);
  return *out;
}

} // namespace

TEST_CASE("every protocol struct survives CAF serialisation unchanged") {
  CHECK(wire::encode(through_caf(sample_task())) == wire::encode(sample_task()));
  CHECK(wire::encode(through_caf(sample_candidate()))
        == wire::encode(sample_candidate()));
  CHECK(wire::encode(through_caf(sample_result()))
        == wire::encode(sample_result()));
  CHECK(wire::encode(through_caf(sample_assignment()))
        == wire::encode(sample_assignment()));
  CHECK(wire::encode(through_caf(sample_summary()))
        == wire::encode(sample_summary()));
  CHECK(wire::encode(through_caf(sample_event())) == wire::encode(sample_event()));
}

TEST_CASE("every protocol struct survives MessagePack unchanged") {
  auto r = through_msgpack(sample_result());
  CHECK(r.candidate == "t1-c0003");
  CHECK(r.status == eval_status::incorrect);
  REQUIRE(r.workloads.size() == 2);
  CHECK(r.workloads[1].speedup_high == 2.75);
  auto c = through_msgpack(sample_candidate());
  CHECK(c.params == sample_candidate().params);
  CHECK(c.source == sample_candidate().source);
  CHECK(wire::encode(through_msgpack(sample_assignment()))
        == wire::encode(sample_assignment()));
  CHECK(wire::encode(through_msgpack(sample_event()))
        == wire::encode(sample_event()));
  CHECK(through_msgpack(sample_task()).families[0].params[1].values.size() == 3);
  CHECK(through_msgpack(sample_task()).families[0].constraints
        == sample_task().families[0].constraints);
}

TEST_CASE("the wire format is a map from field names to values") {
  auto bytes = wire::encode(sample_candidate());
  auto handle = msgpack::unpack(bytes.data(), bytes.size());
  const auto& obj = handle.get();
  REQUIRE(obj.type == msgpack::type::MAP);
  CHECK(obj.via.map.size == 10);
  std::string first{obj.via.map.ptr[0].key.via.str.ptr,
                    obj.via.map.ptr[0].key.via.str.size};
  CHECK(first == "id");
}

TEST_CASE("decoding ignores keys it does not know") {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk{buf};
  pk.pack_map(3);
  pk.pack(std::string{"last_seq"});
  pk.pack(uint64_t{7});
  pk.pack(std::string{"added_in_a_later_version"});
  pk.pack(true);
  pk.pack(std::string{"unfinished"});
  pk.pack(uint64_t{2});
  auto r = wire::decode<run_resumed>(std::string_view{buf.data(), buf.size()});
  REQUIRE(r);
  CHECK(r->last_seq == 7);
  CHECK(r->unfinished == 2);
}

namespace {

/// The MessagePack map `bytes` without the keys in `drop`, as a sender of
/// an earlier version wrote it.
std::string without_keys(
  const std::string& bytes, const std::vector<std::string>& drop) {
  auto handle = msgpack::unpack(bytes.data(), bytes.size());
  const auto& map = handle.get().via.map;
  std::vector<const msgpack::object_kv*> kept;
  for (uint32_t i = 0; i < map.size; ++i)
    if (std::find(drop.begin(), drop.end(), map.ptr[i].key.as<std::string>())
        == drop.end())
      kept.push_back(&map.ptr[i]);
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk{buf};
  pk.pack_map(static_cast<uint32_t>(kept.size()));
  for (const auto* kv : kept) {
    pk.pack(kv->key);
    pk.pack(kv->val);
  }
  return {buf.data(), buf.size()};
}

} // namespace

TEST_CASE("an optional field a sender left out keeps its default, so that "
          "event logs written before it existed still decode") {
  auto t = sample_task();
  t.matched_ratio = 0.99;
  t.max_error = 0.5;
  t.deterministic = false;
  t.trace_definition = "tiny_fp32";
  auto old = without_keys(wire::encode(t),
    {"matched_ratio", "max_error", "deterministic", "trace_definition"});
  auto r = wire::decode<task_spec>(old);
  REQUIRE(r);
  CHECK(r->matched_ratio == 1);
  CHECK(r->max_error == 0);
  CHECK(r->deterministic);
  CHECK(r->trace_definition.empty());
  CHECK(r->name == t.name);
  CHECK(r->atol == t.atol);
  auto full = wire::decode<task_spec>(wire::encode(t));
  REQUIRE(full);
  CHECK(full->matched_ratio == 0.99);
  CHECK(full->max_error == 0.5);
  CHECK_FALSE(full->deterministic);
  CHECK(full->trace_definition == "tiny_fp32");
  // A workload result from before the CPU-time ratio was recorded.
  workload_result w;
  w.workload = "w1";
  w.candidate_cpu_ratio = 1.02;
  auto result = wire::decode<workload_result>(
    without_keys(wire::encode(w), {"candidate_cpu_ratio"}));
  REQUIRE(result);
  CHECK(result->candidate_cpu_ratio == 0);
  CHECK(result->workload == "w1");
  // A template family from before its constraints were declared.
  template_family f{"tiled", "src", {{"tile", {"8", "16"}}}, {"tile >= 8"}};
  auto family = wire::decode<template_family>(
    without_keys(wire::encode(f), {"constraints"}));
  REQUIRE(family);
  CHECK(family->constraints.empty());
  CHECK(family->params.size() == 1);
  // A field that was always there is still required.
  auto no_name = wire::decode<task_spec>(without_keys(old, {"name"}));
  REQUIRE(!no_name);
  CHECK(code_of(no_name.error()) == error::malformed_message);
}

TEST_CASE("decoding rejects malformed input with malformed_message") {
  // Each message says what is wrong and where (it said "std::bad_cast").
  SECTION("a missing field") {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk{buf};
    pk.pack_map(1);
    pk.pack(std::string{"last_seq"});
    pk.pack(uint64_t{7});
    auto r = wire::decode<run_resumed>(std::string_view{buf.data(), buf.size()});
    REQUIRE(!r);
    CHECK(code_of(r.error()) == error::malformed_message);
    CHECK_THAT(render(r.error()),
      Catch::Contains("cannot decode run_resumed: missing field(s) "
                      "'unfinished'"));
  }
  SECTION("a field of the wrong type") {
    auto c = sample_candidate();
    c.tokens = 5; // encoded as one byte, a positive fixint
    auto bytes = wire::encode(c);
    auto pos = bytes.rfind("tokens");
    REQUIRE(pos != std::string::npos);
    bytes[pos + 6] = static_cast<char>(0xa0); // an empty string instead
    auto r = wire::decode<candidate>(bytes);
    REQUIRE(!r);
    CHECK(code_of(r.error()) == error::malformed_message);
    CHECK_THAT(render(r.error()),
      Catch::Contains(
        "cannot decode candidate: field 'tokens': wrong type: got a string"));
  }
  SECTION("an enum code out of range") {
    auto e = sample_event();
    auto bytes = wire::encode(e);
    auto pos = bytes.find("kind");
    REQUIRE(pos != std::string::npos);
    bytes[pos + 4] = 0x7f; // positive fixint 127
    auto r = wire::decode<event>(bytes);
    REQUIRE(!r);
    CHECK(code_of(r.error()) == error::malformed_message);
    CHECK_THAT(render(r.error()),
      Catch::Contains(
        "cannot decode event: field 'kind': 127 is not a valid code"));
  }
  SECTION("truncated bytes") {
    auto bytes = wire::encode(sample_result());
    CHECK(!wire::decode<eval_result>(bytes.substr(0, bytes.size() / 2)));
  }
  SECTION("trailing bytes") {
    CHECK(!wire::decode<candidate>(wire::encode(sample_candidate()) + "x"));
  }
  SECTION("not a map") {
    auto r = wire::decode<candidate>(wire::encode(std::string{"candidate"}));
    REQUIRE(!r);
    CHECK_THAT(render(r.error()),
      Catch::Contains("cannot decode candidate: expected a map, got a string"));
  }
}

TEST_CASE("errors render with their code and context") {
  auto err = make_error(error::invalid_config, "run.seed: expected an integer");
  CHECK(render(err) == "invalid_config: run.seed: expected an integer");
  CHECK(code_of(err) == error::invalid_config);
  CHECK(code_of(caf::error{}) == error::none);
}

TEST_CASE("run_resumed encodes as the example in docs/wire-format.md") {
  auto bytes = wire::encode(run_resumed{7, 1});
  const unsigned char expected[] = {0x82, 0xa8, 'l', 'a', 's', 't', '_', 's',
                                    'e',  'q',  0x07, 0xaa, 'u', 'n', 'f', 'i',
                                    'n',  'i',  's',  'h',  'e', 'd', 0x01};
  CHECK(bytes == std::string(reinterpret_cast<const char*>(expected),
                             sizeof(expected)));
}
