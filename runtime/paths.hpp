// Where the running `eat` program is, and paths derived from it (the runner
// executable lives next to it). Any thread.

#pragma once

#include <filesystem>

namespace eat {

/// Directory of the running executable (from /proc/self/exe).
std::filesystem::path executable_dir();

} // namespace eat
