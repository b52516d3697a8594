#include "runtime/progress_printer.hpp"

#include "runtime/report.hpp"

namespace eat {

listener_actor::behavior_type progress_printer(
  listener_actor::pointer, std::ostream* out, uint64_t done, uint64_t total) {
  auto count = std::make_shared<uint64_t>(done);
  return {
    [=](progress_atom, const team_progress& p) {
      *count += 1;
      *out << progress_line(p, *count, total) << std::endl;
    },
    [=](restructure_atom, const std::string& text) {
      *out << text << std::flush;
    },
  };
}

} // namespace eat
