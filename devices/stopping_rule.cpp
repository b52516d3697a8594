#include "devices/stopping_rule.hpp"

#include <algorithm>

#include "devices/stats.hpp"

namespace eat::devices {

bool stopping_rule::done(int64_t candidate_ns, double elapsed) {
  samples_.push_back(static_cast<double>(candidate_ns));
  if (elapsed >= t_.max_time_s)
    return true;
  if (samples_.size() < t_.min_samples || elapsed < t_.min_time_s
      || samples_.size() < next_check_)
    return false;
  next_check_ = samples_.size() + std::max<size_t>(1, samples_.size() / 64);
  return median_relative_standard_error(samples_) < t_.max_rel_se;
}

} // namespace eat::devices
