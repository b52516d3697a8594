// The executable pages of one loaded shared object, made inaccessible while
// the harness is not calling into it. The runner locks the task's reference
// this way before the candidate is loaded, so a candidate that finds the
// reference in memory (dl_iterate_phdr, /proc/self/maps) and calls it dies
// with SIGSEGV instead of passing off the reference's output as its own.
//
// A determined candidate can mprotect the pages back (it runs in the same
// address space); this raises the bar, re-verification in a separate process
// is the real answer (docs/harness.md). Used by the runner's single thread.

#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace eat::devices {

/// The executable segments of the object that defines a function.
class code_lock {
public:
  /// Finds the executable segments of the object containing `fn`; empty
  /// (locking does nothing) if none is found.
  static code_lock of(void* fn);

  /// Makes the segments inaccessible; returns why not, or "".
  std::string lock() const;

  /// Makes the segments readable and executable again; returns why not.
  std::string unlock() const;

  /// Number of segments found.
  size_t segments() const {
    return segments_.size();
  }

private:
  struct segment {
    uintptr_t start;
    size_t length;
  };

  std::string protect(int prot) const;

  std::vector<segment> segments_;
};

} // namespace eat::devices
