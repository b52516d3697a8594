#include "runtime/paths.hpp"

namespace eat {

std::filesystem::path executable_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    return std::filesystem::current_path();
  return exe.parent_path();
}

} // namespace eat
