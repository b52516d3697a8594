// Specification of the JSON renderings of MessagePack (actors/protocol/
// json.hpp): every MessagePack type, string escaping, numbers that read back
// exactly, refusal of malformed input, and events with their bodies.

#include <catch2/catch.hpp>

#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "actors/protocol/json.hpp"
#include "persistence/learning.hpp"
#include "tests/actors/protocol/samples.hpp"

using namespace eat;

namespace {

/// A strict checker of JSON text (RFC 8259), so that every rendering below
/// is also checked for being JSON at all.
class json_checker {
public:
  explicit json_checker(std::string_view s) : s_(s) {}

  bool ok() {
    return value() && pos_ == s_.size();
  }

private:
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }

  bool digits() {
    auto start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9')
      ++pos_;
    return pos_ > start;
  }

  bool number() {
    eat('-');
    if (!eat('0') && !digits())
      return false;
    if (eat('.') && !digits())
      return false;
    if (eat('e') || eat('E')) {
      if (!eat('+'))
        eat('-');
      return digits();
    }
    return true;
  }

  bool string() {
    if (!eat('"'))
      return false;
    while (pos_ < s_.size()) {
      auto c = static_cast<unsigned char>(s_[pos_++]);
      if (c == '"')
        return true;
      if (c < 0x20)
        return false;
      if (c == '\\' && !escape())
        return false;
    }
    return false;
  }

  bool escape() {
    if (pos_ >= s_.size())
      return false;
    auto c = s_[pos_++];
    if (std::strchr("\"\\/bfnrt", c) != nullptr)
      return true;
    if (c != 'u' || pos_ + 4 > s_.size())
      return false;
    for (int i = 0; i < 4; ++i)
      if (!std::isxdigit(static_cast<unsigned char>(s_[pos_++])))
        return false;
    return true;
  }

  template<class F>
  bool sequence(char close, F element) {
    if (eat(close))
      return true;
    do {
      if (!element())
        return false;
    } while (eat(','));
    return eat(close);
  }

  bool value() {
    if (pos_ >= s_.size())
      return false;
    switch (s_[pos_]) {
      case '{':
        ++pos_;
        return sequence('}', [&] {
          return string() && eat(':') && value();
        });
      case '[':
        ++pos_;
        return sequence(']', [&] {
          return value();
        });
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

/// Packs `f`'s output into MessagePack bytes.
template<class F>
std::string packed(F f) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> p{buf};
  f(p);
  return {buf.data(), buf.size()};
}

/// The JSON of `bytes`; fails the test when it is refused or is not JSON.
std::string json_of(std::string_view bytes) {
  auto x = wire::to_json(bytes);
  if (!x)
    FAIL("unexpected error: " << render(x.error()));
  INFO(*x);
  CHECK(json_checker{*x}.ok());
  return *x;
}

/// The error text for `bytes`; fails the test when they are accepted.
std::string refusal(std::string_view bytes) {
  auto x = wire::to_json(bytes);
  if (x)
    FAIL("accepted as " << *x);
  CHECK(code_of(x.error()) == error::malformed_message);
  return render(x.error());
}

std::string json_of_string(std::string_view s) {
  return json_of(packed([&](auto& p) {
    p.pack(s);
  }));
}

/// A MessagePack float64 holding exactly `x` (msgpack-cxx's pack_double
/// writes integral values, -0.0 included, as integers).
std::string float64(double x) {
  uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof(bits));
  std::string out{"\xcb"};
  for (int shift = 56; shift >= 0; shift -= 8)
    out += static_cast<char>((bits >> shift) & 0xff);
  return out;
}

std::string nested_arrays(size_t depth) {
  return std::string(depth, '\x91') + '\xc0';
}

} // namespace

TEST_CASE(
  "the JSON checker of these tests rejects what is not JSON", "[json]") {
  for (auto good : {"{}", "[1,-2.5e+3,\"a\\u00e9\",null,true]", "-0"})
    CHECK(json_checker{good}.ok());
  for (auto bad : {"", "{\"a\":1,}", "[1 2]", "01", "1.", "\"\x01\"", "\"\\x\"",
         "nul", "{1:2}", "[1]]"})
    CHECK_FALSE(json_checker{bad}.ok());
}

TEST_CASE("JSON renders nil, booleans and integers exactly", "[json]") {
  CHECK(json_of(packed([](auto& p) {
    p.pack_nil();
  })) == "null");
  CHECK(json_of(packed([](auto& p) {
    p.pack(true);
  })) == "true");
  CHECK(json_of(packed([](auto& p) {
    p.pack(false);
  })) == "false");
  CHECK(json_of(packed([](auto& p) {
    p.pack(0);
  })) == "0");
  CHECK(json_of(packed([](auto& p) {
    p.pack(-1);
  })) == "-1");
  CHECK(json_of(packed([](auto& p) {
    p.pack(-300);
  })) == "-300");
  CHECK(json_of(packed([](auto& p) {
    p.pack(std::numeric_limits<uint64_t>::max());
  })) == "18446744073709551615");
  CHECK(json_of(packed([](auto& p) {
    p.pack(std::numeric_limits<int64_t>::min());
  })) == "-9223372036854775808");
}

TEST_CASE(
  "JSON renders floats so that they read back to the same double", "[json]") {
  std::vector<double> values{0.1, 1.0 / 3, 2.5, -1e-300, 5e-324, DBL_MAX, -0.0,
    123456789.123, 1e21, 0.0, 1e-7, -4.35e15};
  for (auto x : values) {
    auto text = json_of(float64(x));
    INFO(text);
    auto back = std::strtod(text.c_str(), nullptr);
    CHECK(std::memcmp(&back, &x, sizeof(double)) == 0);
  }
  CHECK(json_of(float64(2.5)) == "2.5");
  CHECK(json_of(float64(0.1)) == "0.1");
  CHECK(json_of(float64(3.0)) == "3");
  CHECK(json_of(float64(-0.0)) == "-0");
  CHECK(json_of(float64(1e300)) == "1e+300");
  auto f32 = json_of(packed([](auto& p) {
    p.pack_float(0.1f);
  }));
  CHECK(std::strtod(f32.c_str(), nullptr) == static_cast<double>(0.1f));
}

TEST_CASE("JSON renders NaN and infinities as null", "[json]") {
  auto nan = std::numeric_limits<double>::quiet_NaN();
  auto inf = std::numeric_limits<double>::infinity();
  CHECK(json_of(packed([&](auto& p) {
    p.pack_double(nan);
  })) == "null");
  CHECK(json_of(packed([&](auto& p) {
    p.pack_double(inf);
  })) == "null");
  CHECK(json_of(packed([&](auto& p) {
    p.pack_double(-inf);
  })) == "null");
  CHECK(json_of(packed([&](auto& p) {
    p.pack_float(-inf);
  })) == "null");
}

TEST_CASE("JSON escapes quotes, backslashes and control characters", "[json]") {
  CHECK(json_of_string("plain") == "\"plain\"");
  CHECK(json_of_string("") == "\"\"");
  CHECK(json_of_string("say \"hi\"") == "\"say \\\"hi\\\"\"");
  CHECK(json_of_string("a\\b") == "\"a\\\\b\"");
  CHECK(json_of_string("line\nnext") == "\"line\\u000Anext\"");
  CHECK(json_of_string(std::string{"\x01\x1f\t\r", 4})
        == "\"\\u0001\\u001F\\u0009\\u000D\"");
  CHECK(json_of_string(std::string{"a\0b", 3}) == "\"a\\u0000b\"");
  CHECK(json_of_string("/ and \x7f stay") == "\"/ and \x7f stay\"");
}

TEST_CASE(
  "JSON keeps valid UTF-8 and replaces each invalid sequence", "[json]") {
  CHECK(json_of_string("caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac")
        == "\"caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac\"");
  // A stray byte, a truncated sequence, and one cut by the string's end.
  CHECK(json_of_string("a\xff"
                       "b")
        == "\"a\\uFFFDb\"");
  CHECK(json_of_string("a\xe2\x82"
                       "b")
        == "\"a\\uFFFDb\"");
  CHECK(json_of_string("a\xf0\x9f\x98") == "\"a\\uFFFD\"");
  // A lone continuation byte, an overlong '/', a surrogate, above U+10FFFF.
  CHECK(json_of_string("\x80") == "\"\\uFFFD\"");
  CHECK(json_of_string("\xc0\xaf") == "\"\\uFFFD\\uFFFD\"");
  CHECK(json_of_string("\xed\xa0\x80") == "\"\\uFFFD\\uFFFD\\uFFFD\"");
  CHECK(
    json_of_string("\xf4\x90\x80\x80") == "\"\\uFFFD\\uFFFD\\uFFFD\\uFFFD\"");
}

TEST_CASE("JSON renders bin as lowercase hex and ext as an object", "[json]") {
  auto bin = packed([](auto& p) {
    p.pack_bin(4);
    p.pack_bin_body("\x00\xab\x10\xff", 4);
  });
  CHECK(json_of(bin) == "\"00ab10ff\"");
  auto ext = packed([](auto& p) {
    p.pack_ext(2, 7);
    p.pack_ext_body("\x01\xfe", 2);
  });
  CHECK(json_of(ext) == "{\"ext\":7,\"hex\":\"01fe\"}");
  auto negative_ext = packed([](auto& p) {
    p.pack_ext(1, -1);
    p.pack_ext_body("\x00", 1);
  });
  CHECK(json_of(negative_ext) == "{\"ext\":-1,\"hex\":\"00\"}");
}

TEST_CASE("JSON renders nested maps and arrays", "[json]") {
  auto bytes = packed([](auto& p) {
    p.pack_map(3);
    p.pack("list");
    p.pack_array(3);
    p.pack(1);
    p.pack_array(0);
    p.pack_map(1);
    p.pack("deep");
    p.pack_array(1);
    p.pack_nil();
    p.pack("empty");
    p.pack_map(0);
    p.pack("name");
    p.pack("x");
  });
  CHECK(json_of(bytes)
        == "{\"list\":[1,[],{\"deep\":[null]}],\"empty\":{},\"name\":\"x\"}");
}

TEST_CASE("JSON renders map keys that are not strings as strings", "[json]") {
  auto bytes = packed([](auto& p) {
    p.pack_map(6);
    p.pack(5), p.pack("int");
    p.pack(-2), p.pack("negative");
    p.pack_nil(), p.pack("nil");
    p.pack(true), p.pack("bool");
    p.pack_array(2), p.pack("a"), p.pack(1), p.pack("array");
    p.pack_bin(1), p.pack_bin_body("\x0f", 1), p.pack("bin");
  });
  CHECK(json_of(bytes)
        == "{\"5\":\"int\",\"-2\":\"negative\",\"null\":\"nil\","
           "\"true\":\"bool\",\"[\\\"a\\\",1]\":\"array\",\"0f\":\"bin\"}");
}

TEST_CASE("JSON of a described value follows its wire encoding", "[json]") {
  auto json = wire::to_json_value(sample_candidate());
  CHECK(json_checker{json}.ok());
  CHECK_THAT(json, Catch::StartsWith("{\"id\":\"t1-c0003\",\"team\":\"t1\","));
  CHECK_THAT(json, Catch::Contains("\"params\":{\"a\":\"2\",\"b\":\"y\"}"));
  CHECK_THAT(json, Catch::Contains("\"source\":\"extern \\\"C\\\" void f() "
                                   "{}\\u000A\""));
  CHECK_THAT(json, Catch::EndsWith(
                     "\"tokens\":1000,\"usage\":{\"input\":0,\"cache_read\":0,"
                     "\"cache_write\":0,\"output\":0,\"reasoning\":0,"
                     "\"cost_usd\":0}}"));
  auto result = wire::to_json_value(sample_result());
  CHECK_THAT(result, Catch::Contains("\"status\":2,"));
  CHECK_THAT(result, Catch::Contains("\"speedup_high\":2.75,\"sol_fraction\":0,"
                                     "\"candidate_cpu_ratio\":0}"));
  CHECK(wire::to_json_value(std::vector<int>{1, -2}) == "[1,-2]");
}

TEST_CASE("JSON refuses malformed, truncated and over-long input", "[json]") {
  CHECK_THAT(refusal(""), Catch::Contains("malformed MessagePack"));
  // A str of 5 bytes with 2 present; a map missing its last value.
  CHECK_THAT(refusal("\xa5x"), Catch::Contains("malformed MessagePack"));
  CHECK_THAT(refusal(packed([](auto& p) {
    p.pack_map(1);
    p.pack("k");
  })),
    Catch::Contains("malformed MessagePack"));
  // 0xc1 is never used.
  CHECK_THAT(refusal("\xc1"), Catch::Contains("malformed MessagePack"));
  CHECK_THAT(refusal(std::string{"\x01\x02\x03", 3}),
    Catch::Contains("trailing bytes after MessagePack value: 2 of 3"));
  auto whole = wire::encode(sample_candidate());
  for (size_t n : {size_t{1}, whole.size() / 2, whole.size() - 1})
    CHECK_THAT(
      refusal(whole.substr(0, n)), Catch::Contains("malformed MessagePack"));
}

TEST_CASE(
  "JSON refuses lengths larger than the input before allocating", "[json]") {
  // An array and a map that claim 2^32 - 1 elements, in 5 bytes.
  CHECK_THAT(refusal("\xdd\xff\xff\xff\xff"), Catch::Contains("array size"));
  CHECK_THAT(refusal("\xdf\xff\xff\xff\xff"), Catch::Contains("map size"));
  // A str of 2^32 - 1 bytes needs no allocation: its bytes are missing.
  CHECK_THAT(
    refusal("\xdb\xff\xff\xff\xff"), Catch::Contains("malformed MessagePack"));
}

TEST_CASE("JSON refuses nesting deeper than max_json_depth", "[json]") {
  auto at_limit = json_of(nested_arrays(wire::max_json_depth));
  CHECK(at_limit.size() == 2 * wire::max_json_depth + 4);
  CHECK_THAT(
    refusal(nested_arrays(wire::max_json_depth + 1)), Catch::Contains("depth"));
  CHECK_THAT(refusal(nested_arrays(100000)), Catch::Contains("depth"));
}

namespace {

event event_with(event_kind kind, std::string body) {
  event e;
  e.seq = 42;
  e.unix_ms = 1764500000123;
  e.kind = kind;
  e.body = std::move(body);
  return e;
}

/// One event of each kind with a real body, and a fragment of its JSON.
std::map<event_kind, std::pair<std::string, std::string>> samples_by_kind() {
  run_started started{"quickstart-1", "sgemm", 7, 100, "[run]\nseed = 7\n",
    "configs/quickstart.toml", sample_task()};
  learning_entry lesson{
    "L0001", "Tiles of 64 win.", learning_author::team, "t1", {"t1-c0003"}, ""};
  using k = event_kind;
  return {
    {k::run_started, {wire::encode(started),
                       "\"config_toml\":\"[run]\\u000Aseed = 7\\u000A\""}},
    {k::team_spawned,
      {wire::encode(team_spawned{"t1", "local", {"t1.a1"}, "", "start"}),
        "\"agents\":[\"t1.a1\"]"}},
    {k::candidate_submitted,
      {wire::encode(sample_candidate()), "\"parent\":\"t1-c0001\""}},
    {k::evaluation_finished,
      {wire::encode(sample_result()), "\"geomean_speedup\":2.5"}},
    {k::run_finished, {wire::encode(sample_summary()), "\"best_speedup\":2.5"}},
    {k::run_resumed,
      {wire::encode(run_resumed{7, 1}), "{\"last_seq\":7,\"unfinished\":1}"}},
    {k::evaluation_started,
      {wire::encode(evaluation_started{"t1-c0003", "cpu0"}),
        "\"device\":\"cpu0\""}},
    {k::team_dissolved,
      {wire::encode(team_dissolved{"t1", "{\"plateau\":3}", "stuck"}),
        "\"diagnosis\":\"{\\\"plateau\\\":3}\""}},
    {k::team_split,
      {wire::encode(team_split{"t1", {"t2", "t3"}, "", "diverge"}),
        "\"into\":[\"t2\",\"t3\"]"}},
    {k::team_merged,
      {wire::encode(team_merged{{"t2", "t3"}, "t4", "", "converged"}),
        "\"teams\":[\"t2\",\"t3\"],\"into\":\"t4\""}},
    {k::team_restructured,
      {wire::encode(team_restructured{"t1", "explore", {}, "", "", "plateau"}),
        "\"strategy\":\"explore\",\"agents\":[]"}},
    {k::agent_assigned,
      {wire::encode(agent_assigned{"t1", "t1.a2", "tuner", "builtin"}),
        "\"backend\":\"builtin\""}},
    {k::budget_changed,
      {wire::encode(budget_changed{"run", 200, 18446744073709551615u, "x"}),
        "\"tokens\":18446744073709551615"}},
    {k::learning_added,
      {wire::encode(lesson), "\"author\":1,\"author_name\":\"t1\""}},
    {k::node_joined,
      {wire::encode(node_joined{"n1", "10.0.0.2:5555", {"cuda0"}, 4}),
        "\"agent_slots\":4}"}},
    {k::node_lost, {wire::encode(node_lost{"n1", "heartbeat"}), "\"n1\""}},
    {k::operator_action, {wire::encode(operator_action{"ana", "stop", ""}),
                           "\"action\":\"stop\""}},
    {k::proposal_failed,
      {wire::encode(proposal_failed{"t1", "t1.a1", "timed out", 12, {}}),
        "\"failure\":\"timed out\",\"tokens\":12"}},
    {k::agent_evaluated,
      {wire::encode(agent_evaluated{"t1", "t1.a1", sample_result()}),
        "\"agent\":\"t1.a1\",\"result\":{"}},
  };
}

} // namespace

TEST_CASE("an event renders as JSON with its body decoded in place", "[json]") {
  auto samples = samples_by_kind();
  for (uint8_t code = 0; valid_enum_value(event_kind{}, code); ++code) {
    auto kind = static_cast<event_kind>(code);
    INFO("event kind " << to_string(kind));
    auto i = samples.find(kind);
    REQUIRE(i != samples.end());
    auto json = wire::event_to_json(event_with(kind, i->second.first));
    REQUIRE(json);
    CHECK(json_checker{*json}.ok());
    CHECK_THAT(*json, Catch::StartsWith("{\"seq\":42,\"unix_ms\":1764500000123,"
                                        "\"kind\":\""
                                        + to_string(kind) + "\",\"body\":{"));
    CHECK_THAT(*json, Catch::EndsWith("}}"));
    CHECK_THAT(*json, Catch::Contains(i->second.second));
    CHECK(*json
          == "{\"seq\":42,\"unix_ms\":1764500000123,\"kind\":\""
               + to_string(kind)
               + "\",\"body\":" + *wire::to_json(i->second.first) + "}");
  }
}

TEST_CASE(
  "an event whose body does not decode is refused, naming its seq", "[json]") {
  auto body = wire::encode(sample_candidate());
  SECTION("a truncated body") {
    auto e = event_with(event_kind::candidate_submitted, body.substr(0, 20));
    auto json = wire::event_to_json(e);
    REQUIRE_FALSE(json);
    CHECK(code_of(json.error()) == error::malformed_message);
    CHECK_THAT(render(json.error()),
      Catch::Contains("event 42 (candidate_submitted): body: "
                      "malformed MessagePack"));
  }
  SECTION("a body with trailing bytes") {
    auto json = wire::event_to_json(
      event_with(event_kind::candidate_submitted, body + '\x01'));
    REQUIRE_FALSE(json);
    CHECK_THAT(render(json.error()),
      Catch::Contains("event 42 (candidate_submitted): body: "
                      "trailing bytes"));
  }
  SECTION("an empty body") {
    auto json = wire::event_to_json(event_with(event_kind::run_resumed, ""));
    REQUIRE_FALSE(json);
    CHECK_THAT(render(json.error()), Catch::Contains("event 42 (run_resumed)"));
  }
  SECTION("a body that is not a map") {
    auto json = wire::event_to_json(
      event_with(event_kind::run_resumed, wire::encode(std::string{"x"})));
    REQUIRE_FALSE(json);
    CHECK_THAT(render(json.error()),
      Catch::Contains("event 42 (run_resumed): body is not a "
                      "MessagePack map"));
  }
}
