// A local HTTP/1.1 server for tests of the http agent: listens on
// 127.0.0.1 on an ephemeral port, on its own thread; for each connection it
// reads one request (headers and a Content-Length body), records it, and
// replies the next queued response, then closes the connection. Responses
// come from recorded files (tests/actors/agent/recorded/, format in
// docs/agent-http.md). Owned by one test; enqueue/requests are thread-safe.

#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "actors/agent/http_client.hpp"

namespace eat::test {

/// A request as the server received it.
struct recorded_request {
  std::string method;
  std::string path;
  /// Headers by lower-case name.
  header_map headers;
  std::string body;
};

/// A response to replay. Status 0 closes the connection without replying.
struct recorded_response {
  int status = 200;
  std::string reason = "OK";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

/// Parses a recorded response: optional "#" comment lines, the status line
/// ("HTTP/1.1 200 OK"), header lines, an empty line, then the body
/// verbatim. Throws std::runtime_error on a malformed text.
recorded_response parse_recorded(std::string_view text);

/// Reads and parses tests/actors/agent/recorded/<name>.
recorded_response load_recorded(const std::string& name);

/// The replay server; stops and joins its thread on destruction.
class replay_server {
public:
  replay_server();
  ~replay_server();

  replay_server(const replay_server&) = delete;
  replay_server& operator=(const replay_server&) = delete;

  /// "http://127.0.0.1:<port>".
  std::string base_url() const;

  uint16_t port() const {
    return port_;
  }

  /// Queues `x` as the reply to a later request.
  void enqueue(recorded_response x);

  /// The requests received so far, oldest first.
  std::vector<recorded_request> requests() const;

private:
  void serve();
  void handle(int fd);
  recorded_response next_response();

  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  uint16_t port_ = 0;
  mutable std::mutex mtx_;
  std::deque<recorded_response> queue_;
  std::vector<recorded_request> requests_;
  std::thread thread_;
};

/// A TCP port on 127.0.0.1 that refuses connections: bound, not listening,
/// for as long as the object lives.
class closed_port {
public:
  closed_port();
  ~closed_port();

  closed_port(const closed_port&) = delete;
  closed_port& operator=(const closed_port&) = delete;

  uint16_t port() const {
    return port_;
  }

private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

} // namespace eat::test
