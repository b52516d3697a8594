// Specification of the eval channel (eval_channel.hpp): framing and limits,
// clients that misbehave, the device-backed handler with a fake device, and
// the `eat agent-eval` client's output and exit status.

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <vector>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "actors/agent/cli_process.hpp"
#include "actors/agent/eval_channel.hpp"
#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "runtime/system_setup.hpp"
#include "tests/actors/agent/cli_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

using namespace eat;
namespace fs = std::filesystem;

namespace {

using eat::test::actor_fixture;

device_actor::behavior_type canned_device(device_actor::pointer) {
  return {
    [](evaluate_atom, const task_spec& t, const candidate& c,
       uint64_t seed) -> eval_result {
      eval_result r;
      r.candidate = c.id;
      r.seed = seed;
      if (c.source.find("broken") != std::string::npos) {
        r.status = eval_status::compile_error;
        r.detail = "compiler failed";
        r.build_log = "kernel.cpp:1: error: expected ';'";
        return r;
      }
      r.status = eval_status::passed;
      r.geomean_speedup = 2.5;
      workload_result w;
      w.workload = t.workloads.empty() ? "w" : t.workloads[0].name;
      w.status = eval_status::passed;
      w.speedup = 2.5;
      w.speedup_low = 2.4;
      w.speedup_high = 2.6;
      r.workloads.push_back(w);
      return r;
    },
  };
}

/// A device that holds its first evaluation until a candidate with the id
/// "release" arrives; `asked` is set when the first one came.
struct holding_state {
  caf::typed_response_promise<eval_result> held;
  std::string held_id;
};

device_actor::behavior_type holding_device(
  device_actor::stateful_pointer<holding_state> self,
  std::shared_ptr<std::promise<void>> asked) {
  return {
    [=](evaluate_atom, const task_spec&, const candidate& c,
      uint64_t) -> caf::result<eval_result> {
      auto& st = self->state;
      eval_result r;
      r.status = eval_status::passed;
      r.geomean_speedup = 1.5;
      if (c.id != "release") {
        st.held = self->make_response_promise<eval_result>();
        st.held_id = c.id;
        asked->set_value();
        return st.held;
      }
      r.candidate = st.held_id;
      st.held.deliver(r);
      return r;
    },
  };
}

/// What recording_store received.
struct store_record {
  std::vector<event> events;
  std::vector<file_write> files;
  /// Commits are refused (as a store refuses an event of an unknown team).
  bool refuse = false;
};

/// A store that records commits into `rec` (or refuses them).
store_actor::behavior_type recording_store(
  store_actor::pointer, std::shared_ptr<store_record> rec) {
  return {
    [](append_atom, const event&) -> uint64_t {
      return 0;
    },
    [rec](commit_atom, std::vector<event>& events,
      std::vector<file_write>& files) -> caf::result<uint64_t> {
      if (rec->refuse)
        return make_error(error::malformed_message, "unknown team");
      for (auto& e : events)
        rec->events.push_back(std::move(e));
      for (auto& f : files)
        rec->files.push_back(std::move(f));
      return uint64_t{rec->events.size()};
    },
    [](file_atom, const std::string&, uint64_t) -> std::string {
      return {};
    },
    [](read_atom, uint64_t) -> std::vector<event> {
      return {};
    },
  };
}

/// A connection to `path` that sends nothing until closed.
devices::unique_fd connect_idle(const fs::path& path) {
  devices::unique_fd fd{::socket(AF_UNIX, SOCK_STREAM, 0)};
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
  REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  return fd;
}

/// Connects to `path` and sends `bytes` raw, then closes.
void send_raw(const fs::path& path, const std::string& bytes) {
  auto fd = connect_idle(path);
  if (!bytes.empty())
    REQUIRE(::write(fd.get(), bytes.data(), bytes.size())
            == static_cast<ssize_t>(bytes.size()));
}

} // namespace

TEST_CASE("eval channel: a request reaches the handler and its answer comes back") {
  test::temp_dir tmp;
  auto sock = tmp.path() / "eval.sock";
  auto server = eval_server::start(sock, [](const std::string& src) {
    return "status: passed\ngot " + std::to_string(src.size()) + " bytes\n";
  });
  REQUIRE(server);
  auto answer = request_eval(sock, "int k();", 10);
  REQUIRE(answer);
  CHECK(*answer == "status: passed\ngot 8 bytes\n");
  CHECK((*server)->served() == 1);
  server->reset();
  CHECK_FALSE(fs::exists(sock));
}

TEST_CASE("eval channel: clients that disconnect or lie about sizes do not stop the server") {
  test::temp_dir tmp;
  auto sock = tmp.path() / "eval.sock";
  auto server = eval_server::start(sock, [](const std::string&) {
    return std::string{"status: passed\n"};
  });
  REQUIRE(server);
  send_raw(sock, "");                         // connects and leaves
  send_raw(sock, std::string{"\x7f\0\0\0", 4}); // claims ~2 GiB
  send_raw(sock, std::string{"\0\0\0\x10" "ab", 6}); // leaves mid-request
  auto answer = request_eval(sock, "int k();", 10);
  REQUIRE(answer);
  CHECK(*answer == "status: passed\n");
  CHECK((*server)->served() == 1);
  CHECK_FALSE(request_eval(sock, std::string(max_eval_request + 1, 'x'), 10));
  auto empty = request_eval(sock, "", 10);
  REQUIRE(empty);
  CHECK(*empty == "status: error\ndetail: bad request: the kernel is empty\n");
  CHECK((*server)->served() == 1);
}

TEST_CASE("eval channel: a client that connects and sends nothing holds up "
          "no one") {
  // The server read one connection at a time: an idle one held every other
  // request for 30 s (longer than this client's 10 s).
  test::temp_dir tmp;
  auto sock = tmp.path() / "eval.sock";
  auto server = eval_server::start(sock, [](const std::string&) {
    return std::string{"status: passed\n"};
  });
  REQUIRE(server);
  auto idle = connect_idle(sock);
  auto answer = request_eval(sock, "int k();", 10);
  REQUIRE(answer);
  CHECK(*answer == "status: passed\n");
  auto start = std::chrono::steady_clock::now();
  server->reset(); // drops the idle connection instead of waiting 30 s
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
}

TEST_CASE("eval channel: too many open connections are answered busy") {
  test::temp_dir tmp;
  auto sock = tmp.path() / "eval.sock";
  auto server = eval_server::start(sock, [](const std::string&) {
    return std::string{"status: passed\n"};
  });
  REQUIRE(server);
  std::vector<devices::unique_fd> idle;
  for (size_t i = 0; i < max_eval_connections; ++i)
    idle.push_back(connect_idle(sock));
  auto answer = request_eval(sock, "int k();", 10);
  REQUIRE(answer);
  CHECK_THAT(*answer, Catch::StartsWith("status: error\ndetail: busy: 8 "
                                        "connections"));
  idle.pop_back(); // one closes: there is room again
  for (;;) { // until the server has noticed (each try is answered at once)
    answer = request_eval(sock, "int k();", 10);
    REQUIRE(answer);
    if (answer->find("busy") == std::string::npos)
      break;
  }
  CHECK(*answer == "status: passed\n");
}

TEST_CASE("eval channel: long socket paths work through the folder") {
  test::temp_dir tmp;
  auto deep = tmp.path() / std::string(60, 'd') / std::string(60, 'e');
  fs::create_directories(deep);
  auto sock = deep / "eval.sock";
  auto server = eval_server::start(sock, [](const std::string& s) { return s; });
  REQUIRE(server);
  auto answer = request_eval(sock, "echo", 10);
  REQUIRE(answer);
  CHECK(*answer == "echo");
}

TEST_CASE("eval channel: an empty answer is an error, not a silent failure") {
  // eat agent-eval printed nothing and exited 1, as for a failed kernel.
  test::temp_dir tmp;
  auto sock = tmp.path() / "eval.sock";
  auto server = eval_server::start(sock, [](const std::string&) {
    return std::string{};
  });
  REQUIRE(server);
  auto answer = request_eval(sock, "int k();", 10);
  REQUIRE_FALSE(answer);
  CHECK_THAT(render(answer.error()), Catch::Contains("answered nothing"));
}

TEST_CASE("eval channel: a connect to a missing socket fails") {
  test::temp_dir tmp;
  auto answer = request_eval(tmp.path() / "none.sock", "x", 1);
  REQUIRE_FALSE(answer);
  CHECK_THAT(render(answer.error()), Catch::Contains("cannot connect"));
}

TEST_CASE("eval channel: the device handler forwards kernels to the device") {
  actor_fixture f;
  auto dev = f.sys->spawn(canned_device);
  task_spec t;
  t.workloads = {{"m64", {{"m", 64}}}};
  candidate proto;
  proto.id = "t-a-1";
  auto handler = device_eval_handler(*f.sys, dev, t, proto, 7, 30);
  auto text = handler("int fast();");
  CHECK_THAT(text, Catch::StartsWith("status: passed\nspeedup: 2.500x"));
  CHECK_THAT(text, Catch::Contains("workload m64: passed, speedup 2.500x"));
  text = handler("broken");
  CHECK_THAT(text, Catch::StartsWith("status: compile_error\n"));
  CHECK_THAT(text, Catch::Contains("detail: compiler failed"));
  CHECK_THAT(text, Catch::Contains("expected ';'"));
  auto none = device_eval_handler(*f.sys, device_actor{}, t, proto, 7, 30);
  CHECK_THAT(none("int k();"), Catch::Contains("evaluation unavailable"));
}

TEST_CASE("eval channel: each kernel the device evaluated is logged with its "
          "files") {
  // ./eval used the device and left no trace in the run.
  actor_fixture f;
  auto dev = f.sys->spawn(canned_device);
  auto rec = std::make_shared<store_record>();
  auto store = f.sys->spawn(recording_store, rec);
  task_spec t;
  candidate proto;
  proto.id = "t1-t1_a1-3";
  proto.team = "t1";
  proto.agent = "t1.a1";
  auto handler = device_eval_handler(*f.sys, dev, t, proto, 7, 30, store);
  CHECK_THAT(handler("int fast();"), Catch::StartsWith("status: passed\n"));
  CHECK_THAT(handler("broken"), Catch::StartsWith("status: compile_error\n"));
  REQUIRE(rec->events.size() == 2);
  CHECK(rec->events[0].kind == event_kind::agent_evaluated);
  auto first = wire::decode<agent_evaluated>(rec->events[0].body);
  REQUIRE(first);
  CHECK(first->team == "t1");
  CHECK(first->agent == "t1.a1");
  CHECK(first->result.candidate == "t1-t1_a1-3-eval1");
  CHECK(first->result.status == eval_status::passed);
  auto second = wire::decode<agent_evaluated>(rec->events[1].body);
  REQUIRE(second);
  CHECK(second->result.candidate == "t1-t1_a1-3-eval2");
  CHECK(second->result.build_log.empty()); // it is in build.log
  std::map<std::string, std::string> files;
  for (const auto& file : rec->files)
    files[file.path] = file.bytes;
  CHECK(files["/teams/t1/evals/t1-t1_a1-3-eval1/kernel.cpp"] == "int fast();");
  CHECK_THAT(files["/teams/t1/evals/t1-t1_a1-3-eval1/result.md"],
    Catch::StartsWith("# t1-t1_a1-3-eval1: passed"));
  CHECK(files["/teams/t1/evals/t1-t1_a1-3-eval2/build.log"]
        == "kernel.cpp:1: error: expected ';'");
  rec->refuse = true;
  auto unlogged = handler("int fast();");
  CHECK_THAT(unlogged, Catch::StartsWith("status: passed\n"));
  CHECK_THAT(unlogged, Catch::Contains("\nnote: this evaluation was not "
                                       "logged: "));
  CHECK_THAT(unlogged, Catch::EndsWith("unknown team\n"));
}

TEST_CASE("eval channel: an assignment's evaluations stop at max_evals") {
  actor_fixture f;
  auto dev = f.sys->spawn(canned_device);
  auto rec = std::make_shared<store_record>();
  auto store = f.sys->spawn(recording_store, rec);
  candidate proto;
  proto.id = "t1-t1_a1-1";
  proto.team = "t1";
  auto handler
    = device_eval_handler(*f.sys, dev, task_spec{}, proto, 7, 30, store, 2);
  CHECK_THAT(handler("int a();"), Catch::StartsWith("status: passed\n"));
  CHECK_THAT(handler("int b();"), Catch::StartsWith("status: passed\n"));
  CHECK(handler("int c();")
        == "status: unavailable\ndetail: evaluation unavailable: this "
           "assignment's 2 evaluations are spent (agents.cli.max_evals); "
           "propose your kernel\n");
  CHECK(rec->events.size() == 2); // the device was asked twice
}

TEST_CASE("eval channel: an attempt that ends during an evaluation does not "
          "wait for it, and the evaluation is still logged") {
  // The server's stop waited for the device: a CLI that exited with a
  // ./eval in flight held its assignment, and Ctrl-C, until the device's
  // deadline.
  actor_fixture f;
  auto asked = std::make_shared<std::promise<void>>();
  auto dev = f.sys->spawn(holding_device, asked);
  auto rec = std::make_shared<store_record>();
  auto store = f.sys->spawn(recording_store, rec);
  candidate proto;
  proto.id = "t1-t1_a1-1";
  proto.team = "t1";
  test::temp_dir tmp;
  auto sock = tmp.path() / "eval.sock";
  auto server = eval_server::start(
    sock, device_eval_handler(*f.sys, dev, task_spec{}, proto, 7, 60, store));
  REQUIRE(server);
  auto client = std::async(std::launch::async, [&] {
    return request_eval(sock, "int k();", 60);
  });
  asked->get_future().wait(); // the device holds the evaluation
  auto stopped = std::async(std::launch::async, [&] {
    server->reset();
  });
  bool prompt
    = stopped.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  CHECK(prompt);
  CHECK(rec->events.empty());
  // The device answers; the evaluation is logged all the same.
  caf::scoped_actor self{*f.sys};
  candidate release;
  release.id = "release";
  self
    ->request(dev, std::chrono::seconds(30), evaluate_atom_v, task_spec{},
      release, uint64_t{1})
    .receive([](eval_result&) {},
      [](caf::error& err) {
        FAIL(render(err));
      });
  stopped.wait();
  client.wait();
  for (int i = 0; i < 300 && rec->events.empty(); ++i)
    self->request(store, std::chrono::seconds(30), read_atom_v, uint64_t{1})
      .receive([](std::vector<event>&) {}, [](caf::error&) {});
  REQUIRE(rec->events.size() == 1);
  auto logged = wire::decode<agent_evaluated>(rec->events[0].body);
  REQUIRE(logged);
  CHECK(logged->result.candidate == "t1-t1_a1-1-eval1");
}

TEST_CASE("eval channel: eat agent-eval prints the answer and exits by status") {
  actor_fixture f;
  auto dev = f.sys->spawn(canned_device);
  test::temp_dir tmp;
  auto sock = tmp.path() / "eval.sock";
  auto server = eval_server::start(
    sock, device_eval_handler(*f.sys, dev, task_spec{}, candidate{}, 1, 30));
  REQUIRE(server);
  auto run = [&](const std::string& kernel) {
    std::ofstream{tmp.path() / "kernel.cpp"} << kernel;
    cli_run_spec spec;
    spec.argv = {EAT_FAKE_EAT, "agent-eval", sock.string(),
                 (tmp.path() / "kernel.cpp").string()};
    spec.cwd = tmp.path();
    auto r = run_cli_process(spec);
    REQUIRE(r);
    return *r;
  };
  auto ok = run("int fast();");
  CHECK(ok.status.code == 0);
  CHECK_THAT(ok.output, Catch::StartsWith("status: passed\n"));
  auto bad = run("broken");
  CHECK(bad.status.code == 1);
  CHECK_THAT(bad.output, Catch::StartsWith("status: compile_error\n"));
  cli_run_spec usage;
  usage.argv = {EAT_FAKE_EAT, "agent-eval"};
  usage.cwd = tmp.path();
  auto r = run_cli_process(usage);
  REQUIRE(r);
  CHECK(r->status.code == 2);
  CHECK_THAT(r->errors, Catch::Contains("usage: eat agent-eval"));
  // A named pipe (it waited for ever) or a directory (an empty kernel went)
  // is refused before anything is sent.
  REQUIRE(::mkfifo((tmp.path() / "pipe").c_str(), 0600) == 0);
  for (const char* name : {"pipe", "."}) {
    cli_run_spec odd;
    odd.argv = {
      EAT_FAKE_EAT, "agent-eval", sock.string(), (tmp.path() / name).string()};
    odd.cwd = tmp.path();
    auto refused = run_cli_process(odd);
    REQUIRE(refused);
    CHECK(refused->status.code == 2);
    CHECK_THAT(
      refused->errors, Catch::Contains("not a regular file")
                         || Catch::Contains("a directory, not a file"));
  }
}

TEST_CASE("eval channel: the answer names each GPU kernel's registers, "
          "shared memory and spills from the build log") {
  eval_result r;
  r.status = eval_status::passed;
  r.geomean_speedup = 3.0;
  r.build_log = "ptxas info    : Compiling entry function 'eat_tile' for "
                "'sm_90'\n"
                "ptxas info    : Function properties for eat_tile\n"
                "    0 bytes stack frame, 0 bytes spill stores, 0 bytes "
                "spill loads\n"
                "ptxas info    : Used 64 registers, used 1 barriers, 8192 "
                "bytes smem\n";
  CHECK_THAT(render_eval_text(r),
    Catch::Contains("resources: eat_tile (sm_90): 64 registers, 8192 B "
                    "shared, 0 B stack, 0 B spill stores, 0 B spill "
                    "loads\n"));
  // A CPU compile's log has no such report, and the answer no such line.
  r.build_log = "candidate.cpp:3:7: warning: unused variable 'x'\n";
  CHECK_THAT(render_eval_text(r), !Catch::Contains("resources:"));
}

TEST_CASE("eval channel: waiting for the attempt's keeper, it answers no "
          "one, then only the processes of the PID namespace the keeper "
          "made, while it runs") {
  // Another run's CLI found the socket's path (in /proc/net/unix) and had
  // its kernels evaluated and logged as this team's (red team); one that
  // polled for a new socket got in before the keeper had started.
  test::temp_dir tmp;
  auto sock = tmp.path() / "eval.sock";
  auto server = eval_server::start(
    sock,
    [](const std::string&) {
      return std::string{"status: passed\n"};
    },
    true);
  REQUIRE(server);
  auto early = request_eval(sock, "int fast();", 30);
  REQUIRE(early);
  CHECK(*early
        == "status: error\ndetail: refused: this channel serves only its own "
           "attempt's CLI\n");
  std::ofstream{tmp.path() / "kernel.cpp"} << "int fast();";
  REQUIRE(::mkfifo((tmp.path() / "go").c_str(), 0600) == 0);
  // The CLI asks, prints the answer, then waits until the test has asked
  // from outside its namespace.
  auto spec = test::spec_for(
    {"/bin/sh", "-c",
      std::string{EAT_FAKE_EAT} + " agent-eval eval.sock kernel.cpp; cat go"},
    tmp.path());
  spec.on_start = [&](pid_t keeper) {
    (*server)->serve_only_children_of(keeper);
  };
  for (bool namespaces : {true, false}) {
    INFO(namespaces);
    spec.namespaces = namespaces;
    std::string outside;
    spec.on_line = [&](std::string_view line) {
      if (line.starts_with("status: ")) {
        auto answer = request_eval(sock, "int fast();", 30);
        outside = answer ? *answer : render(answer.error());
        std::ofstream{tmp.path() / "go"} << "go\n";
      }
      return true;
    };
    auto r = run_cli_process(spec);
    REQUIRE(r);
    CHECK_THAT(r->output, Catch::StartsWith("status: passed\n"));
    // In eat's namespaces (no namespaces) the test's process is one of
    // the CLI's namespace.
    if (namespaces)
      CHECK(outside
            == "status: error\ndetail: refused: this channel serves only "
               "its own attempt's CLI\n");
    else
      CHECK(outside == "status: passed\n");
  }
}
