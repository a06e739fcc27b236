#include "tests/support/loopback_port.hpp"

#include <arpa/inet.h>
#include <fstream>
#include <netinet/in.h>
#include <random>
#include <sys/socket.h>
#include <unistd.h>

namespace outbox {

namespace {

struct port_range {
  int bottom;
  int top;
};

// The ports no outgoing connection is given: below the ephemeral range, or
// above it when the range starts too low to leave room below; any port
// when it leaves room on neither side.
port_range listener_ports() {
  int low = 32768, high = 60999;
  std::ifstream in{"/proc/sys/net/ipv4/ip_local_port_range"};
  if (!(in >> low >> high) || low > high)
    low = 32768, high = 60999;
  if (low - 1 - 10000 >= 2000)
    return {10000, low - 1};
  if (65535 - (high + 1) >= 2000)
    return {high + 1, 65535};
  return {20000, 65535};
}

// Binding without SO_REUSEADDR fails for any socket on the port, listening,
// connected or in TIME_WAIT.
bool bindable(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

} // namespace

uint16_t free_loopback_port() {
  auto range = listener_ports();
  static thread_local std::mt19937 random{std::random_device{}()};
  std::uniform_int_distribution<int> pick{range.bottom, range.top};
  for (int attempt = 0; attempt < 200; ++attempt) {
    auto port = static_cast<uint16_t>(pick(random));
    if (bindable(port))
      return port;
  }
  return 0;
}

} // namespace outbox
