// How the parent maps the end of a runner process to a status.

#include <csignal>

#include <catch2/catch.hpp>

#include "actors/protocol/wire.hpp"
#include "devices/runner_client.hpp"

using namespace eat;
using namespace eat::devices;

namespace {

exit_status exited(int code) {
  exit_status x;
  x.exited = true;
  x.code = code;
  return x;
}

exit_status killed(int sig) {
  exit_status x;
  x.signal = sig;
  return x;
}

std::string valid_reply(uint64_t nonce) {
  runner_reply reply;
  reply.nonce = nonce;
  reply.status = eval_status::passed;
  return wire::encode(reply);
}

} // namespace

TEST_CASE("a runner past its deadline is a timeout") {
  auto out = interpret_runner_end(true, 2, killed(SIGKILL), "", 1, "");
  CHECK_FALSE(out.reply);
  CHECK(out.status == eval_status::timeout);
  CHECK(out.detail
        == "exceeded the 2 s deadline; its process group was "
           "killed");
}

TEST_CASE("a runner killed by a signal is a runtime error naming it") {
  auto out
    = interpret_runner_end(false, 2, killed(SIGSEGV), "", 1, "stderr: oops");
  CHECK(out.status == eval_status::runtime_error);
  CHECK(out.detail == "killed by SIGSEGV; stderr: oops");
  CHECK(interpret_runner_end(false, 2, killed(SIGABRT), "", 1, "").detail
        == "killed by SIGABRT");
}

TEST_CASE("a runner over its CPU-time limit is a timeout") {
  auto out = interpret_runner_end(false, 2, killed(SIGXCPU), "", 1, "");
  CHECK(out.status == eval_status::timeout);
  CHECK(out.detail.find("CPU-time limit") != std::string::npos);
}

TEST_CASE("a runner that exits before reporting is a runtime error") {
  auto out = interpret_runner_end(false, 2, exited(0), "", 1, "");
  CHECK(out.status == eval_status::runtime_error);
  CHECK(out.detail == "runner exited with status 0 before reporting");
}

TEST_CASE("a reply that does not decode is a malformed reply") {
  auto out = interpret_runner_end(
    false, 2, exited(0), "garbage" + valid_reply(1), 1, "");
  CHECK(out.status == eval_status::runtime_error);
  CHECK(out.detail.rfind("malformed reply: ", 0) == 0);
}

TEST_CASE("a reply without the request's nonce is a malformed reply") {
  auto out = interpret_runner_end(false, 2, exited(0), valid_reply(2), 1, "");
  CHECK(out.status == eval_status::runtime_error);
  CHECK(out.detail.find("nonce") != std::string::npos);
}

TEST_CASE("a complete reply from a runner that exited cleanly is used") {
  auto out = interpret_runner_end(false, 2, exited(0), valid_reply(9), 9, "");
  REQUIRE(out.reply);
  CHECK(out.status == eval_status::passed);
  CHECK(out.reply->nonce == 9);
}

TEST_CASE("a complete reply followed by a failing exit is not trusted") {
  auto out = interpret_runner_end(false, 2, exited(4), valid_reply(9), 9, "");
  CHECK_FALSE(out.reply);
  CHECK(out.detail == "runner exited with status 4 after reporting");
}
