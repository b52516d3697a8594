#include "actors/agent/eval_channel.hpp"

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <caf/event_based_actor.hpp>

#include "actors/agent/eval_peer.hpp"
#include "actors/artifacts.hpp"
#include "actors/protocol/error.hpp"
#include "actors/protocol/event_body.hpp"
#include "actors/protocol/file_read.hpp"
#include "devices/gpu_resources.hpp"

namespace eat {

namespace fs = std::filesystem;
using devices::unique_fd;
using clock_type = std::chrono::steady_clock;

namespace {

/// Set while an eval_server's thread runs the handler: whether that server
/// is stopping.
thread_local const std::atomic<bool>* server_stopping = nullptr;

/// Seconds a connected peer gets to send its request or take the answer.
constexpr double transfer_timeout_s = 30;

/// How long `eat agent-eval` waits for the device (the queue may be long).
constexpr double client_timeout_s = 4 * 3600;

/// A UNIX socket address; `dir` keeps a directory open when the path is too
/// long for sun_path and is reached through /proc/self/fd instead.
struct socket_address {
  sockaddr_un addr{};
  socklen_t len = 0;
  unique_fd dir;
};

caf::error io_error(const std::string& what) {
  return make_error(error::io_failure, what + ": " + std::strerror(errno));
}

caf::expected<socket_address> address_of(const fs::path& path) {
  socket_address a;
  a.addr.sun_family = AF_UNIX;
  auto text = path.string();
  if (text.size() >= sizeof(a.addr.sun_path)) {
    auto parent = path.parent_path().empty() ? fs::path{"."}
                                             : path.parent_path();
    int dfd = ::open(parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
      return io_error("cannot open " + parent.string());
    a.dir = unique_fd{dfd};
    text = "/proc/self/fd/" + std::to_string(dfd) + "/"
           + path.filename().string();
    if (text.size() >= sizeof(a.addr.sun_path))
      return make_error(error::io_failure,
                        "socket name too long: " + path.string());
  }
  std::memcpy(a.addr.sun_path, text.c_str(), text.size() + 1);
  a.len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + text.size()
                                 + 1);
  return a;
}

/// When a transfer gives up: at `deadline`, or once `abort_fd` (if not -1)
/// becomes readable (the server is stopping).
struct transfer_limit {
  clock_type::time_point deadline;
  int abort_fd = -1;
};

transfer_limit deadline_after(double s, int abort_fd = -1) {
  return {clock_type::now()
            + std::chrono::duration_cast<clock_type::duration>(
              std::chrono::duration<double>(s)),
    abort_fd};
}

/// Waits for `events` on `fd` within `limit`; false on timeout, abort or
/// error.
bool wait_for(int fd, short events, const transfer_limit& limit) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      limit.deadline - clock_type::now());
    if (left.count() < 0)
      return false;
    pollfd p[2] = {{fd, events, 0}, {limit.abort_fd, POLLIN, 0}};
    int rc = ::poll(
      p, 2, static_cast<int>(std::min<int64_t>(left.count() + 1, 60'000)));
    if (rc > 0)
      return p[1].revents == 0;
    if (rc < 0 && errno != EINTR)
      return false;
  }
}

bool send_all(int fd, std::string_view data, const transfer_limit& deadline) {
  while (!data.empty()) {
    if (!wait_for(fd, POLLOUT, deadline))
      return false;
    auto n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

caf::expected<std::string> recv_exact(
  int fd, size_t n, const transfer_limit& deadline) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    if (!wait_for(fd, POLLIN, deadline))
      return make_error(error::io_failure, "eval channel timed out");
    auto r = ::recv(fd, out.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return make_error(error::io_failure, "eval channel closed early");
    got += static_cast<size_t>(r);
  }
  return out;
}

bool send_frame(int fd, std::string_view body, const transfer_limit& deadline) {
  auto n = static_cast<uint32_t>(body.size());
  char head[4] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                  static_cast<char>(n >> 8), static_cast<char>(n)};
  return send_all(fd, {head, 4}, deadline) && send_all(fd, body, deadline);
}

caf::expected<std::string> recv_frame(
  int fd, size_t max, const transfer_limit& deadline) {
  auto head = recv_exact(fd, 4, deadline);
  if (!head)
    return head;
  uint32_t n = 0;
  for (unsigned char c : *head)
    n = (n << 8) | c;
  if (n > max)
    return make_error(error::io_failure,
                      "eval message of " + std::to_string(n)
                        + " bytes exceeds the limit of " + std::to_string(max));
  return recv_exact(fd, n, deadline);
}

std::string fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, x);
  return buf;
}

} // namespace

caf::expected<std::unique_ptr<eval_server>> eval_server::start(
  const fs::path& socket_path, eval_handler handler, bool keeper_to_come) {
  auto addr = address_of(socket_path);
  if (!addr)
    return std::move(addr.error());
  unique_fd fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (!fd)
    return io_error("cannot open a socket");
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr->addr),
             addr->len)
      != 0)
    return io_error("cannot bind " + socket_path.string());
  if (::listen(fd.get(), 4) != 0)
    return io_error("cannot listen on " + socket_path.string());
  auto wakeup = devices::make_pipe();
  if (!wakeup)
    return std::move(wakeup.error());
  return std::unique_ptr<eval_server>{
    new eval_server(socket_path, std::move(fd), std::move(*wakeup),
      std::move(handler), keeper_to_come ? -1 : 0)};
}

eval_server::eval_server(fs::path path, unique_fd listener,
  devices::pipe_ends wakeup, eval_handler handler, pid_t keeper)
  : path_(std::move(path)), listener_(std::move(listener)),
    wakeup_(std::move(wakeup)), handler_(std::move(handler)), keeper_(keeper) {
  thread_ = std::thread{[this] { serve(); }};
}

eval_server::~eval_server() {
  stopping_ = true;
  char byte = 1;
  while (::write(wakeup_.write.get(), &byte, 1) < 0 && errno == EINTR)
    ; // retry
  thread_.join();
  // Connections waiting for their request or their turn end at once; an
  // evaluation in progress is waited for.
  for (auto& c : connections_)
    c->thread.join();
  std::error_code ec;
  fs::remove(path_, ec);
}

void eval_server::serve() {
  for (;;) {
    pollfd p[2] = {{listener_.get(), POLLIN, 0},
                   {wakeup_.read.get(), POLLIN, 0}};
    int rc = ::poll(p, 2, -1);
    if (rc < 0 && errno == EINTR)
      continue;
    if (rc < 0 || p[1].revents != 0)
      return;
    if ((p[0].revents & POLLIN) == 0)
      continue;
    unique_fd conn{::accept4(listener_.get(), nullptr, nullptr,
                             SOCK_CLOEXEC)};
    if (conn)
      accept_one(std::move(conn));
  }
}

void eval_server::accept_one(unique_fd fd) {
  // Joins the threads of connections that are over.
  for (auto i = connections_.begin(); i != connections_.end();) {
    if ((*i)->done) {
      (*i)->thread.join();
      i = connections_.erase(i);
    } else {
      ++i;
    }
  }
  auto busy = [&](const std::string& why) {
    send_frame(fd.get(), "status: error\ndetail: busy: " + why + "\n",
      deadline_after(1, wakeup_.read.get()));
  };
  if (auto keeper = keeper_.load();
      keeper < 0 || (keeper > 0 && !peer_is_child_of(fd.get(), keeper))) {
    send_frame(fd.get(),
      "status: error\ndetail: refused: this channel serves only its own "
      "attempt's CLI\n",
      deadline_after(1, wakeup_.read.get()));
    return;
  }
  if (connections_.size() >= max_eval_connections)
    return busy(std::to_string(max_eval_connections)
                + " connections to this workspace's eval channel are open; "
                  "close one and ask again");
  auto c = std::make_unique<connection>();
  c->fd = std::move(fd);
  auto* raw = c.get();
  try {
    c->thread = std::thread{[this, raw] {
      serve_one(raw->fd.get());
      raw->fd.reset();
      raw->done = true;
    }};
  } catch (const std::system_error& e) {
    fd = std::move(c->fd);
    return busy(std::string{"cannot start a thread for it: "} + e.what());
  }
  connections_.push_back(std::move(c));
}

void eval_server::serve_one(int fd) {
  auto request = recv_frame(fd, max_eval_request,
    deadline_after(transfer_timeout_s, wakeup_.read.get()));
  if (!request) {
    send_frame(fd,
      "status: error\ndetail: bad request: " + render(request.error()) + "\n",
      deadline_after(transfer_timeout_s, wakeup_.read.get()));
    return;
  }
  if (request->empty()) { // no device time for it, nor one of max_evals
    send_frame(fd, "status: error\ndetail: bad request: the kernel is empty\n",
      deadline_after(transfer_timeout_s, wakeup_.read.get()));
    return;
  }
  std::string text;
  {
    // One evaluation at a time; the others wait here, not in the accept
    // loop, so that a slow or idle client holds up no one's request.
    std::lock_guard<std::mutex> turn{evaluating_};
    if (stopping_) {
      text = "status: error\ndetail: the agent's attempt is over\n";
    } else {
      server_stopping = &stopping_;
      text = handler_(*request);
      server_stopping = nullptr;
    }
  }
  if (text.size() > max_eval_reply)
    text.resize(max_eval_reply);
  ++served_;
  // A client that went away meanwhile is fine: the answer is dropped.
  send_frame(fd, text, deadline_after(transfer_timeout_s, wakeup_.read.get()));
}

std::string render_eval_text(const eval_result& r) {
  std::string out = "status: " + to_string(r.status) + "\n";
  if (r.status == eval_status::passed)
    out += "speedup: " + fmt("%.3fx", r.geomean_speedup)
           + " (geometric mean over the workloads, vs. the naive baseline)\n";
  for (const auto& w : r.workloads) {
    out += "workload " + w.workload + ": " + to_string(w.status);
    if (w.status == eval_status::passed)
      out += ", speedup " + fmt("%.3fx", w.speedup) + " ["
             + fmt("%.3f", w.speedup_low) + ", " + fmt("%.3f", w.speedup_high)
             + "], median " + fmt("%.0f ns", w.candidate_median_ns)
             + " vs. baseline " + fmt("%.0f ns", w.baseline_median_ns);
    if (!w.detail.empty())
      out += ": " + w.detail;
    out += "\n";
  }
  if (!r.detail.empty())
    out += "detail: " + r.detail + "\n";
  for (const auto& line : devices::kernel_resources(r.build_log))
    out += "resources: " + line + "\n";
  if (r.status == eval_status::compile_error && !r.build_log.empty())
    out += "build log:\n" + r.build_log.substr(0, 8192) + "\n";
  return out;
}

namespace {

/// Where an answer is delivered, once.
using answer_slot = std::shared_ptr<std::promise<std::string>>;

/// Evaluates `c` on `device`, logs it in `store` (when there is one:
/// agent_evaluated, with its files) and delivers the agent's text to
/// `answer`. An actor of its own does it, so that the evaluation is logged
/// even when no one waits for the answer any more.
void evaluate_and_log(caf::actor_system& sys, device_actor device,
  task_spec task, candidate c, uint64_t seed, double timeout_s,
  store_actor store, answer_slot answer) {
  auto timeout
    = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  sys.spawn([=](caf::event_based_actor* self) -> caf::behavior {
    auto deliver = [=](std::string text) {
      answer->set_value(std::move(text));
      self->quit();
    };
    self->request(device, timeout, evaluate_atom_v, task, c, seed)
      .then(
        [=](eval_result& r) {
          auto text = render_eval_text(r);
          if (!store)
            return deliver(std::move(text));
          agent_evaluated body{c.team, c.agent, r};
          body.result.build_log.clear(); // it is in the files
          self
            ->request(store, std::chrono::seconds(60), commit_atom_v,
              std::vector<event>{make_event(event_kind::agent_evaluated, body)},
              agent_eval_files(c, r))
            .then(
              [=](uint64_t) {
                deliver(text);
              },
              [=](caf::error& err) {
                deliver(text + "note: this evaluation was not logged: "
                        + render(err) + "\n");
              });
        },
        [=](caf::error& err) {
          deliver("status: error\ndetail: " + render(err) + "\n");
        });
    return {[](caf::unit_t) {}}; // alive until it has delivered
  });
}

} // namespace

bool eval_abandoned() {
  return server_stopping != nullptr && server_stopping->load();
}

eval_handler device_eval_handler(caf::actor_system& sys, device_actor device,
  task_spec task, candidate proto, uint64_t seed, double timeout_s,
  store_actor store, uint32_t max_evals) {
  auto count = std::make_shared<uint64_t>(0);
  return [&sys, device, task = std::move(task), proto = std::move(proto), seed,
           timeout_s, count, store,
           max_evals](const std::string& source) -> std::string {
    if (!device)
      return "status: unavailable\ndetail: evaluation unavailable: this "
             "agent was given no device\n";
    if (max_evals > 0 && *count >= max_evals)
      return "status: unavailable\ndetail: evaluation unavailable: this "
             "assignment's "
             + std::to_string(max_evals)
             + " evaluations are spent (agents.cli.max_evals); propose your "
               "kernel\n";
    auto c = proto;
    c.source = source;
    c.id = proto.id + "-eval" + std::to_string(++*count);
    auto answer = std::make_shared<std::promise<std::string>>();
    auto text = answer->get_future();
    evaluate_and_log(
      sys, device, task, std::move(c), seed, timeout_s, store, answer);
    // The attempt may end first (its CLI exited, or the run is stopping):
    // then no one waits for the device, which still logs the evaluation.
    while (text.wait_for(std::chrono::milliseconds(200))
           != std::future_status::ready)
      if (eval_abandoned())
        return "status: error\ndetail: the attempt ended before the "
               "evaluation did (it is logged when the device answers)\n";
    return text.get();
  };
}

caf::expected<std::string> request_eval(const fs::path& socket_path,
                                        const std::string& source,
                                        double timeout_s) {
  if (source.size() > max_eval_request)
    return make_error(error::io_failure,
                      "kernel of " + std::to_string(source.size())
                        + " bytes exceeds the limit of "
                        + std::to_string(max_eval_request));
  auto addr = address_of(socket_path);
  if (!addr)
    return std::move(addr.error());
  unique_fd fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (!fd)
    return io_error("cannot open a socket");
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr->addr),
                addr->len)
      != 0)
    return io_error("cannot connect to " + socket_path.string());
  auto deadline = deadline_after(timeout_s);
  errno = 0;
  if (!send_frame(fd.get(), source, deadline)) {
    auto why = errno != 0 ? std::string{std::strerror(errno)} : "timed out";
    // A server that is busy answers without reading, and closes.
    if (auto early = recv_frame(fd.get(), max_eval_reply, deadline);
        early && !early->empty())
      return early;
    return make_error(error::io_failure,
      "cannot send the kernel to " + socket_path.string() + ": " + why);
  }
  auto answer = recv_frame(fd.get(), max_eval_reply, deadline);
  if (answer && answer->empty())
    return make_error(error::io_failure,
      "the eval channel at " + socket_path.string() + " answered nothing");
  return answer;
}

int agent_eval_main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: eat agent-eval <socket> <kernel file>\n";
    return 2;
  }
  // Not a named pipe (it waited for ever), /dev/zero or a file of
  // gigabytes (read whole before the size check: out of memory).
  auto source = read_regular_file(argv[2], max_eval_request);
  if (!source.ok) {
    std::cerr << "eval: cannot read " << argv[2] << ": " << source.why << "\n";
    return 2;
  }
  auto answer = request_eval(argv[1], source.text, client_timeout_s);
  if (!answer) {
    std::cerr << "eval: " << render(answer.error()) << "\n";
    return 2;
  }
  std::cout << *answer << std::flush;
  if (answer->rfind("status: passed\n", 0) == 0)
    return 0;
  if (answer->rfind("status: error", 0) == 0
      || answer->rfind("status: unavailable", 0) == 0)
    return 2;
  return 1;
}

} // namespace eat
