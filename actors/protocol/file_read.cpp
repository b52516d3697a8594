#include "actors/protocol/file_read.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace eat {

namespace {

struct file_closer {
  void operator()(std::FILE* f) const {
    std::fclose(f);
  }
};

/// What kind of file `mode` is, other than a regular one.
std::string not_regular(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory, not a file";
  if (S_ISFIFO(mode))
    return "a named pipe, not a regular file";
  if (S_ISSOCK(mode))
    return "a socket, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device, not a regular file";
  return "not a regular file";
}

} // namespace

file_contents read_regular_file(
  const std::filesystem::path& file, size_t max_bytes, bool follow_links) {
  file_contents result;
  // Without O_NONBLOCK, opening a named pipe waits for a writer: eat hung.
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
  if (!follow_links)
    flags |= O_NOFOLLOW;
  int fd = ::open(file.c_str(), flags);
  if (fd < 0) {
    result.why = !follow_links && errno == ELOOP
                   ? "a symbolic link, not a regular file"
                   : std::strerror(errno);
    return result;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    result.why = std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    result.why = not_regular(st.st_mode);
  if (!result.why.empty()) {
    ::close(fd);
    return result;
  }
  std::unique_ptr<std::FILE, file_closer> f{::fdopen(fd, "rb")};
  if (!f) {
    result.why = std::strerror(errno);
    ::close(fd);
    return result;
  }
  char buf[16384];
  while (auto n = std::fread(buf, 1, sizeof buf, f.get())) {
    result.text.append(buf, n);
    if (result.text.size() > max_bytes) {
      result.why = "larger than " + std::to_string(max_bytes >> 20) + " MiB";
      return result;
    }
  }
  if (std::ferror(f.get())) {
    result.why = std::strerror(errno);
    return result;
  }
  result.ok = true;
  return result;
}

} // namespace eat
