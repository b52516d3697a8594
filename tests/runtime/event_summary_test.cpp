// Specification of `eat history`'s lines (runtime/event_summary.hpp): text
// that comes from agents and devices is shown, never acted on by the
// terminal.

#include <catch2/catch.hpp>

#include <string>

#include "actors/protocol/event_body.hpp"
#include "runtime/event_summary.hpp"

using namespace eat;

TEST_CASE("a history line shows control characters and bytes that are not "
          "UTF-8 as escapes, and keeps UTF-8 text") {
  // A kernel's compile error put ESC [2J (clear the screen) into `eat
  // history`.
  eval_result r;
  r.candidate = "t1-a1-1-eval1";
  r.status = eval_status::compile_error;
  r.detail = "error: \"\xff\xfe\x1b[2J 5 \xc2\xb5s \xc2\x9b\x31m \xe2\x82\xac"
             "\r\nforged line";
  auto e = make_event(
    event_kind::agent_evaluated, agent_evaluated{"t1", "t1.a1", r});
  e.seq = 7;
  auto line = event_summary(e);
  CHECK_THAT(
    line, Catch::EndsWith(
            "agent_evaluated  t1.a1 (t1) ./eval t1-a1-1-eval1: compile_error: "
            "error: \"\\xff\\xfe\\x1b[2J 5 \xc2\xb5s \\xc2\\x9b1m "
            "\xe2\x82\xac\\x0d"));
  CHECK(line.find('\x1b') == std::string::npos);
}

TEST_CASE("a run that ended with no passing candidate says so") {
  run_summary s;
  s.reason = "max_evaluations reached (1)";
  auto e = make_event(event_kind::run_finished, s);
  CHECK_THAT(event_summary(e),
    Catch::EndsWith("max_evaluations reached (1); no candidate "
                    "passed"));
  s.best_candidate = "t1-c0001";
  s.best_speedup = 2;
  CHECK_THAT(event_summary(make_event(event_kind::run_finished, s)),
    Catch::EndsWith("; best 2.00x (t1-c0001)"));
}
