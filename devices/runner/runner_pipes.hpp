// The runners' side of their two pipes (devices/runner_protocol.hpp): the
// request arrives whole on fd 3, the reply leaves on fd 4. Shared by
// eat-runner and the GPU runners; a failure is explained on stderr under
// the runner's name and ends the process with the documented exit code
// (2: the request cannot be read, 4: the reply cannot be written).

#pragma once

#include <string>

namespace eat::devices {

/// Writes "`program`: `why`" to stderr and ends the process with `code`
/// at once (no destructors or atexit handlers of kernel code run).
[[noreturn]] void runner_exit(
  const char* program, int code, const std::string& why);

/// Closes every descriptor above the reply pipe: those the parent leaked
/// (store, lock files) are not the kernel's.
void keep_only_protocol_fds();

/// The request's bytes, read to the end of fd 3, which is then closed.
/// Exits with 2 on a read error or past 64 MiB (requests are a few KiB).
std::string read_request_bytes(const char* program);

/// Writes all of `bytes` to fd 4; exits with 4 when it cannot.
void write_reply_bytes(const char* program, const std::string& bytes);

} // namespace eat::devices
