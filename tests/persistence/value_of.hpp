// Unwrapping caf::expected in tests: an error fails the test with its text
// instead of reading an empty value.

#pragma once

#include <utility>

#include <caf/expected.hpp>
#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"

namespace eat::test {

/// Returns the value of `x`; fails the test when `x` holds an error.
template<class T>
T value_of(caf::expected<T> x) {
  if (!x)
    FAIL("unexpected error: " << eat::render(x.error()));
  return std::move(*x);
}

} // namespace eat::test
