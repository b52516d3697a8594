#include "devices/runner/entries.hpp"

#include <cstdlib>

#include <dlfcn.h>
#include <malloc.h>

#include "devices/runner/checks.hpp"
#include "devices/runner/drop_root.hpp"

namespace eat::devices {

void steady_heap_for_kernels() {
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

entry_lookup load_entry(const std::string& path, const char* symbol) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  close_code_fd(path);
  if (handle == nullptr)
    return {nullptr, std::string{"cannot load: "} + ::dlerror()};
  ::dlerror();
  void* fn = ::dlsym(handle, symbol);
  if (fn == nullptr)
    return {nullptr, std::string{"does not define "} + symbol
                       + " (declare it extern \"C\" with the task's ABI)"};
  return {fn, {}};
}

namespace {

/// Unlocks `code` when a kernel calls exit(): the atexit handler runs before
/// the dynamic linker's finalisers, which run the locked object's fini code.
void unlock_at_exit(const code_lock& code) {
  static code_lock saved;
  saved = code;
  static const bool registered
    = std::atexit([] { static_cast<void>(saved.unlock()); }) == 0;
  static_cast<void>(registered);
}

} // namespace

loaded_entries load_entries(const std::string& reference_so,
  const char* reference_entry, const std::string& baseline_so,
  const std::string& candidate_so, const char* entry) {
  loaded_entries result;
  auto fail = [&](eval_status status, std::string detail) {
    result.status = status;
    result.detail = std::move(detail);
    return std::move(result);
  };
  auto ref = load_entry(reference_so, reference_entry);
  if (!ref.fn)
    return fail(eval_status::rejected, "the task's reference " + ref.error);
  auto base = load_entry(baseline_so, entry);
  if (!base.fn)
    return fail(eval_status::rejected, "the task's baseline " + base.error);
  result.reference_code = code_lock::of(ref.fn);
  unlock_at_exit(result.reference_code);
  if (auto why = result.reference_code.lock(); !why.empty())
    return fail(eval_status::runtime_error,
      "cannot lock the task's reference before loading the candidate: "
        + why);
  auto threads = thread_count();
  auto cand = load_entry(candidate_so, entry);
  if (!cand.fn)
    return fail(eval_status::compile_error, "the candidate " + cand.error);
  if (thread_count() > threads)
    return fail(eval_status::rejected,
      "hidden threads: the candidate's constructors started threads");
  result.reference = ref.fn;
  result.baseline = base.fn;
  result.candidate = cand.fn;
  return result;
}

} // namespace eat::devices
