// The channel between a coding agent's `./eval` and the run: while a cli
// agent's CLI runs, an eval_server listens on the UNIX socket
// `<workspace>/.eat/eval.sock` on its own thread; `eval` runs `eat agent-eval
// .eat/eval.sock kernel.cpp`, whose client (agent_eval_main) sends the kernel
// and prints the answer. The server hands each kernel to an eval_handler;
// device_eval_handler forwards it to the run's device actor, so an agent
// benchmarks only through the device's exclusive slices.
//
// Framing: one request per connection; the client sends a 4-byte big-endian
// length and the kernel source (at most max_eval_request bytes), the server
// answers the same way with text (at most max_eval_reply bytes) whose first
// line is "status: <status>". See docs/agent-cli.md.
//
// An eval_server is owned by the cli agent's attempt. Each connection gets a
// thread of its own (at most max_eval_connections at once), so a client
// that connects and sends nothing holds up no one; the handler runs on
// those threads one request at a time.

#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <sys/types.h>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "actors/protocol/interfaces.hpp"
#include "devices/unique_fd.hpp"

namespace eat {

/// Largest kernel source a client may send.
constexpr size_t max_eval_request = size_t{4} << 20;

/// Largest answer the server sends (longer texts are cut).
constexpr size_t max_eval_reply = size_t{1} << 20;

/// Most connections a server serves at once; one more is answered "status:
/// error" and "busy".
constexpr size_t max_eval_connections = 8;

/// Turns a kernel source into the text shown to the agent.
using eval_handler = std::function<std::string(const std::string& source)>;

/// Serves eval requests on a UNIX socket until destroyed.
class eval_server {
public:
  /// Binds `socket_path` (which must not exist) and starts serving on a new
  /// thread. With `keeper_to_come`, no client is served until
  /// serve_only_children_of names the keeper: a CLI that polled for a new
  /// socket connected before the keeper had started, and was served (red
  /// team). Fails with error::io_failure.
  static caf::expected<std::unique_ptr<eval_server>> start(
    const std::filesystem::path& socket_path, eval_handler handler,
    bool keeper_to_come = false);

  /// Stops the threads (after the evaluation in progress, if any; waiting
  /// requests are dropped) and removes the socket file.
  ~eval_server();

  eval_server(const eval_server&) = delete;
  eval_server& operator=(const eval_server&) = delete;

  /// Requests answered so far.
  size_t served() const {
    return served_.load();
  }

  /// From now on serves only clients in the PID namespace that process
  /// `keeper` (the attempt's eat-keeper) makes for its children: the
  /// attempt's CLI and what it runs. Any other client is answered "status:
  /// error" and "refused", and costs no evaluation: the CLI of another run,
  /// which found the socket's path (in /proc/net/unix, or in a run that
  /// started during its attempt), had its kernels evaluated and logged as
  /// this team's (red team). A keeper that runs its program in eat's
  /// namespaces admits every process of eat's.
  void serve_only_children_of(pid_t keeper) {
    keeper_ = keeper;
  }

private:
  eval_server(std::filesystem::path path, devices::unique_fd listener,
    devices::pipe_ends wakeup, eval_handler handler, pid_t keeper);

  /// One client's connection and the thread serving it.
  struct connection {
    devices::unique_fd fd;
    std::thread thread;
    std::atomic<bool> done{false};
  };

  void serve();
  void accept_one(devices::unique_fd fd);
  void serve_one(int fd);

  std::filesystem::path path_;
  devices::unique_fd listener_;
  devices::pipe_ends wakeup_;
  eval_handler handler_;
  std::atomic<size_t> served_{0};
  std::atomic<bool> stopping_{false};
  /// See serve_only_children_of; 0: every client is served; -1: none is,
  /// until the keeper is named.
  std::atomic<pid_t> keeper_;
  /// Held while the handler runs.
  std::mutex evaluating_;
  /// Touched only by the accept thread, and by the destructor after it.
  std::list<std::unique_ptr<connection>> connections_;
  std::thread thread_;
};

/// Renders an evaluation for an agent: "status: passed", the geometric-mean
/// speedup, one line per workload, and the detail or build log on failure.
std::string render_eval_text(const eval_result& r);

/// A handler that sends each source, as a copy of `proto` with that source
/// and the id "<proto.id>-eval<k>", to `device` and renders its answer;
/// without a device it answers "status: unavailable" and "evaluation
/// unavailable". With a `store`, each evaluation the device answered is
/// logged there (event agent_evaluated, files in /teams/<team>/evals/<id>/);
/// an answer that could not be logged ends with a "note:" line saying why.
/// After `max_evals` requests (0: no limit) it answers "status:
/// unavailable" without asking the device. When the attempt ends while the
/// device works (eval_abandoned), it answers at once; the evaluation is
/// still logged when the device answers. Call only from a thread that
/// may block (it waits up to `timeout_s` for the device, and up to 60 s for
/// the store).
eval_handler device_eval_handler(caf::actor_system& sys, device_actor device,
  task_spec task, candidate proto, uint64_t seed, double timeout_s,
  store_actor store = {}, uint32_t max_evals = 0);

/// Whether the eval_server that runs the handler on this thread is stopping
/// (the attempt is over): a handler that waits may give up then. False on
/// any other thread.
bool eval_abandoned();

/// Sends `source` to the server at `socket_path` and returns its answer;
/// fails with error::io_failure when the channel breaks or `timeout_s`
/// passes.
caf::expected<std::string> request_eval(
  const std::filesystem::path& socket_path, const std::string& source,
  double timeout_s);

/// The `eat agent-eval <socket> <kernel file>` subcommand (argv[0] is the
/// subcommand's name): prints the answer; exits 0 when the kernel passed, 1
/// when it was evaluated and did not pass, 2 on a usage or channel error.
int agent_eval_main(int argc, char** argv);

} // namespace eat
