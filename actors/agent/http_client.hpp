// A small blocking HTTP client over libcurl: one POST with headers, a body
// streamed to a callback as it arrives, the status and response headers,
// connect/total/idle timeouts; plus URL parsing and a bare TCP connect check
// used to fail fast when a server is missing. Used by the http agent
// (http_agent.hpp) from its own detached thread; every function is
// thread-safe (each call owns its curl handle).

#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

namespace eat {

/// Response headers by lower-case name (the last value wins).
using header_map = std::map<std::string, std::string>;

/// One POST request.
struct http_request {
  std::string url;
  /// Request headers as (name, value) pairs.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// Time to establish the TCP (and TLS) connection.
  std::chrono::milliseconds connect_timeout{10'000};
  /// Time for the whole exchange; 0 for no limit.
  std::chrono::milliseconds total_timeout{600'000};
  /// Abort when no byte arrives for this long; 0 for no limit.
  std::chrono::milliseconds idle_timeout{0};
  /// Abort a response body that grows beyond this (a server that streams
  /// for ever filled eat's memory).
  size_t max_body_bytes = size_t{64} << 20;
  /// Optional; once it reads true (the run is ending) the transfer is
  /// abandoned: "stopped: the run is ending".
  const std::atomic<bool>* halt = nullptr;
};

/// What the server answered.
struct http_response {
  long status = 0;
  header_map headers;
  /// The whole body, also when it was streamed to a callback.
  std::string body;
};

/// Receives each piece of the body as it arrives.
using body_callback = std::function<void(std::string_view)>;

/// Sends `req` as a POST and waits for the whole response, passing body
/// pieces to `on_body` (if set) as they arrive. Fails (agent_failed) only
/// when no complete HTTP response arrived: connection refused, DNS, TLS,
/// timeout, connection reset; the text says which, e.g. "cannot connect to
/// 127.0.0.1:8000 (Connection refused)". An HTTP error status is a response,
/// not a failure.
caf::expected<http_response> http_post(
  const http_request& req, const body_callback& on_body = {});

/// The parts of an http(s) URL.
struct url_parts {
  std::string scheme;
  std::string host;
  uint16_t port = 0;
  /// The path without a trailing '/', e.g. "" or "/openai".
  std::string path;
};

/// Parses "http://host[:port][/path]" or "https://..." (IPv6 hosts in
/// brackets); the port defaults to 80 or 443. Fails (invalid_config) saying
/// what is wrong.
caf::expected<url_parts> parse_url(std::string_view url);

/// Opens and closes a TCP connection to host:port within `timeout`. Fails
/// (agent_failed) with "cannot connect to host:port (reason)".
caf::expected<void> check_tcp_connect(
  const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

} // namespace eat
