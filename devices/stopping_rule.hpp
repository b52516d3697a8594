// When a workload's sampling stops (BENCHMARK-PROTOCOL.md section 3): at
// the time cap, or once enough samples and time are in and the candidate's
// median is known precisely enough. Both runners (CPU and GPU) use it.
//
// The median's standard error, not the mean's: the verdict rests on
// medians, and rare stalls of the machine (on the development VM, a few
// process switches of a few milliseconds every half second with kernel
// processes: docs/harness.md, "Stopping rule" and "Kernel processes")
// barely move it, where they keep a mean's standard error above the bound
// until the cap.
//
// Used by one thread.

#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "devices/options.hpp"

namespace eat::devices {

class stopping_rule {
public:
  explicit stopping_rule(const timing_options& t) : t_(t) {}

  /// Adds the candidate's sample of a round, `elapsed` seconds into
  /// sampling; returns whether sampling is done. The error is looked at
  /// again only once the samples have grown by a 64th since it was last
  /// looked at, so that a check costs little per round whatever their
  /// number.
  bool done(int64_t candidate_ns, double elapsed);

private:
  const timing_options& t_;
  std::vector<double> samples_;
  size_t next_check_ = 0;
};

} // namespace eat::devices
