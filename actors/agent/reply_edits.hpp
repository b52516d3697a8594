// Turning a language model's reply into kernel source: either the last fenced
// code block of the reply, or aider-style SEARCH/REPLACE blocks applied to the
// parent kernel. Used by the agent backends (http_agent, the cli backend).
// Pure functions; any thread.

#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace eat {

/// The contents of the last fenced code block (``` optionally followed by a
/// language tag) in `text`, or nullopt.
std::optional<std::string> last_fenced_block(std::string_view text);

/// Applies SEARCH/REPLACE blocks (aider style: <<<<<<< SEARCH / ======= /
/// >>>>>>> REPLACE) to `parent`; fails (error::agent_failed) naming the block
/// whose SEARCH text is not found exactly once.
caf::expected<std::string> apply_search_replace(
  const std::string& parent, std::string_view text);

/// The kernel a reply gives: SEARCH/REPLACE blocks applied to parent if any,
/// else the last fenced block; fails saying why.
caf::expected<std::string> kernel_from_reply(
  const std::string& parent, std::string_view reply);

} // namespace eat
