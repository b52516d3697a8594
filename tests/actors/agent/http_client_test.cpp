// Specification of the HTTP client: URL parsing, a POST with headers and a
// streamed body against the loopback replay server, and connect failures.

#include <catch2/catch.hpp>

#include <atomic>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "actors/agent/http_client.hpp"
#include "actors/protocol/error.hpp"
#include "tests/actors/agent/replay_server.hpp"

using namespace eat;

TEST_CASE("parse_url splits scheme, host, port and path") {
  auto a = parse_url("http://127.0.0.1:8000");
  REQUIRE(a);
  CHECK(a->scheme == "http");
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 8000);
  CHECK(a->path == "");
  auto b = parse_url("https://api.openai.com/v1/");
  REQUIRE(b);
  CHECK(b->port == 443);
  CHECK(b->path == "/v1");
  auto c = parse_url("http://[::1]:11434/");
  REQUIRE(c);
  CHECK(c->host == "::1");
  CHECK(c->port == 11434);
}

TEST_CASE("parse_url says what is wrong") {
  CHECK_THAT(render(parse_url("localhost:8000").error()),
    Catch::Contains("expected http://host"));
  CHECK_THAT(
    render(parse_url("ftp://x").error()), Catch::Contains("http or https"));
  CHECK_THAT(
    render(parse_url("http://x:99999").error()), Catch::Contains("bad port"));
  CHECK_THAT(
    render(parse_url("http://:80").error()), Catch::Contains("no host"));
  auto secret = render(parse_url("http://user:pw@127.0.0.1:1/v1").error());
  CHECK_THAT(secret, Catch::Contains("'http://...@127.0.0.1:1/v1'"));
  CHECK_THAT(secret, Catch::Contains("credentials do not go in the URL"));
  CHECK_THAT(secret, !Catch::Contains("pw"));
}

TEST_CASE("http_post sends headers and body and streams the response") {
  test::replay_server server;
  server.enqueue(test::parse_recorded("HTTP/1.1 201 Created\n"
                                      "Content-Type: text/event-stream\n"
                                      "Retry-After: 3\n\n"
                                      "data: one\n\ndata: two\n\n"));
  http_request req;
  req.url = server.base_url() + "/echo";
  req.headers = {{"X-Test", "yes"}};
  req.body = std::string(5000, 'b');
  std::string streamed;
  auto res = http_post(req, [&](std::string_view x) {
    streamed += x;
  });
  REQUIRE(res);
  CHECK(res->status == 201);
  CHECK(res->headers["retry-after"] == "3");
  CHECK(res->body == "data: one\n\ndata: two\n\n");
  CHECK(streamed == res->body);
  auto got = server.requests();
  REQUIRE(got.size() == 1);
  CHECK(got[0].path == "/echo");
  CHECK(got[0].headers["x-test"] == "yes");
  CHECK(got[0].headers.count("expect") == 0);
  CHECK(got[0].body == req.body);
}

TEST_CASE("http_post stops reading a response that grows past its limit") {
  // A server that streamed for ever filled eat's memory.
  test::replay_server server;
  server.enqueue(test::parse_recorded("HTTP/1.1 200 OK\n"
                                      "Content-Type: text/event-stream\n\n"
                                      + std::string(300'000, 'x')));
  http_request req;
  req.url = server.base_url() + "/big";
  req.max_body_bytes = 100'000;
  size_t streamed = 0;
  auto res = http_post(req, [&](std::string_view x) {
    streamed += x.size();
  });
  REQUIRE(!res);
  CHECK(render(res.error())
        == "agent_failed: the response from " + req.url
             + " went past 100000 bytes; stopped reading");
  CHECK(streamed <= 100'000);
}

TEST_CASE("http_post abandons a request once the run is ending") {
  // A server that takes minutes to answer held Ctrl-C up to timeout_s.
  // This one accepts connections (the kernel's backlog) and never answers.
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  std::atomic<bool> halt{true};
  http_request req;
  req.url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/x";
  req.total_timeout = std::chrono::milliseconds{600'000};
  req.halt = &halt;
  auto res = http_post(req);
  ::close(fd);
  REQUIRE(!res);
  CHECK(render(res.error()) == "agent_failed: stopped: the run is ending");
}

TEST_CASE("http_post reports a refused connection as such") {
  test::closed_port closed;
  http_request req;
  req.url = "http://127.0.0.1:" + std::to_string(closed.port()) + "/x";
  auto res = http_post(req);
  REQUIRE(!res);
  CHECK(render(res.error())
        == "agent_failed: cannot connect to 127.0.0.1:"
             + std::to_string(closed.port()) + " (Connection refused)");
}

TEST_CASE("check_tcp_connect succeeds against a listening port") {
  test::replay_server server;
  CHECK(check_tcp_connect(
    "127.0.0.1", server.port(), std::chrono::milliseconds{2000}));
  CHECK(server.requests().empty());
}
