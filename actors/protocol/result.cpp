#include "actors/protocol/result.hpp"

namespace eat {

std::string to_string(eval_status x) {
  switch (x) {
    case eval_status::pending: return "pending";
    case eval_status::passed: return "passed";
    case eval_status::incorrect: return "incorrect";
    case eval_status::compile_error: return "compile_error";
    case eval_status::runtime_error: return "runtime_error";
    case eval_status::timeout: return "timeout";
    case eval_status::rejected: return "rejected";
  }
  return "unknown";
}

} // namespace eat
