// Loading a request's three shared objects in a runner, shared by eat-runner
// and the GPU runners: the task's reference, then its baseline, then the
// candidate, whose static constructors run inside the sandbox. Before the
// candidate is loaded the reference's code is made unreadable and
// unwritable (code_lock, so a kernel cannot read or patch it) and an exit
// handler is registered that unlocks it again (a kernel that calls exit()
// must not crash the dynamic linker's finalisers); a candidate whose
// constructors start threads is rejected.

#pragma once

#include <string>

#include "actors/protocol/result.hpp"
#include "devices/runner/code_lock.hpp"

namespace eat::devices {

/// A shared object's entry point, or why it could not be had.
struct entry_lookup {
  void* fn = nullptr;
  std::string error;
};

/// Loads `path` (closing the descriptor behind a path that drop_root
/// rewrote) and finds `symbol` in it.
entry_lookup load_entry(const std::string& path, const char* symbol);

/// Sets the process's heap up as a long-running program's ends up (glibc's
/// dynamic limits at their maximum: blocks of up to 32 MiB come from the
/// heap, which keeps up to 64 MiB free at its top), so that a kernel that
/// allocates its buffers on every call is not charged page faults for
/// them on every call, as a fresh process's heap did (docs/harness.md,
/// "Kernel code's heap"). Called before any kernel is loaded.
void steady_heap_for_kernels();

/// The three entry points, or the status and detail of why not.
struct loaded_entries {
  void* reference = nullptr;
  void* baseline = nullptr;
  void* candidate = nullptr;
  code_lock reference_code;
  eval_status status = eval_status::passed;
  std::string detail;
};

/// Loads `reference_entry` from `reference_so` and `entry` from
/// `baseline_so` and `candidate_so`. Failures: the reference or baseline
/// (rejected: the task is at fault), the lock (runtime_error), the
/// candidate (compile_error: it does not define the entry), threads
/// started by its constructors (rejected). The handles are never closed:
/// a runner exits after one request.
loaded_entries load_entries(const std::string& reference_so,
  const char* reference_entry, const std::string& baseline_so,
  const std::string& candidate_so, const char* entry);

} // namespace eat::devices
