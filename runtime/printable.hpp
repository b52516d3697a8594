// Text from agents, kernels and devices made safe for a terminal: control
// characters and bytes that are not UTF-8 shown as \xNN, so that a
// terminal never acts on them (ESC [2J cleared the screen; a CLI's kernel
// set the window title and printed fake result lines: red team).

#pragma once

#include <mutex>
#include <streambuf>
#include <string>
#include <string_view>

namespace eat {

/// `text` with control characters (newlines and tabs too, unless
/// `keep_lines`) and bytes that are not UTF-8 shown as \xNN.
std::string printable(std::string_view text, bool keep_lines = false);

/// A stream buffer that passes what is written to it on to `target` as
/// printable(line, true), line by line (a flush passes on a partial line).
/// Thread-safe. For the console of `eat run` and `eat resume`, which print
/// what agents wrote (compile errors, file names, reasons).
class printable_buffer : public std::streambuf {
public:
  explicit printable_buffer(std::streambuf* target) : target_{target} {}
  ~printable_buffer() override;

protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

private:
  /// Writes out the lines of line_ that are whole (all, with `partial`).
  void pass_on(bool partial);

  std::streambuf* target_;
  std::string line_;
  std::mutex mutex_;
};

} // namespace eat
