#include "tests/actors/agent/replay_server.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace eat::test {

namespace {

std::string lower(std::string x) {
  std::transform(x.begin(), x.end(), x.begin(), [](unsigned char c) {
    return std::tolower(c);
  });
  return x;
}

std::string trim(std::string_view x) {
  auto first = x.find_first_not_of(" \t\r");
  if (first == std::string_view::npos)
    return {};
  auto last = x.find_last_not_of(" \t\r");
  return std::string{x.substr(first, last - first + 1)};
}

/// Splits "name: value".
std::pair<std::string, std::string> split_header(std::string_view line) {
  auto colon = line.find(':');
  if (colon == std::string_view::npos)
    throw std::runtime_error("bad header line: " + std::string{line});
  return {trim(line.substr(0, colon)), trim(line.substr(colon + 1))};
}

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    auto n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0)
      return; // the client went away; nothing to replay to
    data.remove_prefix(static_cast<size_t>(n));
  }
}

/// The pieces to write one by one: a server-sent event stream is sent
/// event by event, anything else at once.
std::vector<std::string_view> pieces(const recorded_response& r) {
  bool sse = false;
  for (const auto& [name, value] : r.headers)
    sse = sse
          || (lower(name) == "content-type"
              && value.find("text/event-stream") != std::string::npos);
  std::string_view body{r.body};
  if (!sse)
    return {body};
  std::vector<std::string_view> result;
  while (!body.empty()) {
    auto end = body.find("\n\n");
    auto n = end == std::string_view::npos ? body.size() : end + 2;
    result.push_back(body.substr(0, n));
    body.remove_prefix(n);
  }
  return result;
}

/// Reads one request from `fd`; nullopt-like empty method when the client
/// sent nothing usable.
recorded_request read_request(int fd) {
  std::string data;
  char buf[4096];
  size_t header_end = std::string::npos;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    auto n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0)
      return {};
    data.append(buf, static_cast<size_t>(n));
  }
  recorded_request req;
  std::istringstream head{data.substr(0, header_end)};
  std::string line;
  std::getline(head, line);
  std::istringstream first{line};
  first >> req.method >> req.path;
  while (std::getline(head, line))
    if (!trim(line).empty()) {
      auto [name, value] = split_header(line);
      req.headers[lower(name)] = value;
    }
  size_t length = 0;
  if (auto i = req.headers.find("content-length"); i != req.headers.end())
    length = std::stoul(i->second);
  req.body = data.substr(header_end + 4);
  while (req.body.size() < length) {
    auto n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0)
      break;
    req.body.append(buf, static_cast<size_t>(n));
  }
  return req;
}

} // namespace

recorded_response parse_recorded(std::string_view text) {
  recorded_response r;
  auto next_line = [&text]() {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    return line;
  };
  auto status = next_line();
  while (!status.empty() && status.front() == '#')
    status = next_line();
  std::istringstream first{std::string{status}};
  std::string version;
  first >> version >> r.status;
  if (version.rfind("HTTP/", 0) != 0 || !first)
    throw std::runtime_error("bad status line: " + std::string{status});
  std::getline(first >> std::ws, r.reason);
  for (auto line = next_line(); !line.empty(); line = next_line())
    r.headers.push_back(split_header(line));
  r.body = std::string{text};
  return r;
}

recorded_response load_recorded(const std::string& name) {
  auto path = std::filesystem::path{EAT_RECORDED_DIR} / name;
  std::ifstream in{path, std::ios::binary};
  if (!in)
    throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return parse_recorded(text.str());
}

namespace {

/// A TCP socket bound to 127.0.0.1 on an ephemeral port, and the port.
std::pair<int, uint16_t> bind_loopback() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0
      || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("cannot bind a socket to 127.0.0.1");
  return {fd, ntohs(addr.sin_port)};
}

} // namespace

closed_port::closed_port() {
  std::tie(fd_, port_) = bind_loopback();
}

closed_port::~closed_port() {
  ::close(fd_);
}

replay_server::replay_server() {
  std::tie(listen_fd_, port_) = bind_loopback();
  if (::listen(listen_fd_, 16) != 0 || ::pipe2(stop_pipe_, O_CLOEXEC) != 0)
    throw std::runtime_error("replay_server: cannot listen on 127.0.0.1");
  thread_ = std::thread{[this] {
    serve();
  }};
}

replay_server::~replay_server() {
  char x = 1;
  [[maybe_unused]] auto n = ::write(stop_pipe_[1], &x, 1);
  thread_.join();
  ::close(listen_fd_);
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
}

std::string replay_server::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

void replay_server::enqueue(recorded_response x) {
  std::lock_guard<std::mutex> guard{mtx_};
  queue_.push_back(std::move(x));
}

std::vector<recorded_request> replay_server::requests() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return requests_;
}

recorded_response replay_server::next_response() {
  std::lock_guard<std::mutex> guard{mtx_};
  if (queue_.empty())
    return {500, "Internal Server Error", {{"Content-Type", "text/plain"}},
      "replay_server: no response queued"};
  auto x = std::move(queue_.front());
  queue_.pop_front();
  return x;
}

void replay_server::serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 || (fds[1].revents & POLLIN) != 0)
      return;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    handle(fd);
    ::close(fd);
  }
}

void replay_server::handle(int fd) {
  auto req = read_request(fd);
  if (req.method.empty())
    return;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    requests_.push_back(req);
  }
  auto res = next_response();
  if (res.status == 0)
    return; // drop the connection without a reply
  std::string head
    = "HTTP/1.1 " + std::to_string(res.status) + " " + res.reason + "\r\n";
  for (const auto& [name, value] : res.headers)
    head += name + ": " + value + "\r\n";
  head += "Content-Length: " + std::to_string(res.body.size())
          + "\r\nConnection: close\r\n\r\n";
  write_all(fd, head);
  for (auto piece : pieces(res))
    write_all(fd, piece);
  ::shutdown(fd, SHUT_WR);
}

} // namespace eat::test
