#include "tests/support/silent_server.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace outbox {

silent_server::silent_server() {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0)
    return;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
      || listen(fd_, 16) != 0
      || getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return;
  port_ = ntohs(addr.sin_port);
}

silent_server::~silent_server() {
  if (fd_ >= 0)
    close(fd_);
}

} // namespace outbox
