// A checker of FlashInfer-Bench's schema for the tests of `eat export
// traces`: field names, types, and which status carries correctness and
// performance. Written from flashinfer_bench/data/{solution,trace,workload}.py
// (commit 40e6ca7 of flashinfer-ai/flashinfer-bench). Plain functions.

#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace eat::test {

/// One line per problem found; empty when the value conforms.
using problems = std::vector<std::string>;

/// Checks one Solution JSON object.
problems check_solution(const nlohmann::json& s);

/// Checks one Trace JSONL line, including its status-dependent rules.
problems check_trace(const nlohmann::json& t);

} // namespace eat::test
