#include "core/base/small_file.hpp"

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/errors.hpp"

namespace outbox {

namespace {

caf::error unreadable(const std::string& why) {
  return make_error(errc::config_unreadable, why);
}

// Closes the descriptor on every way out.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

caf::expected<std::string> read_small_file(const std::string& path,
                                           size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  fd_guard f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0)
    return unreadable(std::string{"cannot be opened: "} + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    return unreadable(std::string{"cannot be read: "} + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return unreadable("is not a regular file");
  if (static_cast<size_t>(st.st_size) > max_bytes)
    return unreadable("is larger than " + std::to_string(max_bytes) + " bytes");
  // Read at most one byte past the limit: the file may grow meanwhile.
  std::string out;
  char buf[65536];
  for (;;) {
    auto n = ::read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return unreadable(std::string{"cannot be read: "} + std::strerror(errno));
    if (n == 0)
      break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes)
      return unreadable("is larger than " + std::to_string(max_bytes)
                        + " bytes");
  }
  return out;
}

caf::expected<std::string> read_secret_file(const std::string& path,
                                            size_t max_bytes) {
  auto text = read_small_file(path, max_bytes);
  if (!text)
    return text;
  text->resize(std::min(text->find('\n'), text->size()));
  if (!text->empty() && text->back() == '\r')
    text->pop_back();
  return text;
}

} // namespace outbox
