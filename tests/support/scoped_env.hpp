// An environment variable set (or unset) for the rest of a scope, then put
// back as it was, so that one test case leaves none of its environment to
// the next when Catch2 runs them in one process.

#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace eat::test {

/// Sets the environment variable `name` to `value` (unsets it for none)
/// until the end of the scope.
class scoped_env {
public:
  scoped_env(const char* name, std::optional<std::string> value) : name_{name} {
    if (const char* old = std::getenv(name))
      old_ = old;
    set(value);
  }
  ~scoped_env() {
    set(old_);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

private:
  void set(const std::optional<std::string>& value) {
    if (value)
      ::setenv(name_, value->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  const char* name_;
  std::optional<std::string> old_;
};

} // namespace eat::test
