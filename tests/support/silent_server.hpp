#pragma once

#include <cstdint>

namespace outbox {

/// A TCP server on 127.0.0.1 that accepts (the kernel does, from its
/// backlog) and never says a word: a wrong port, a hung node, a database
/// host that takes connections and never answers.
class silent_server {
public:
  silent_server();
  ~silent_server();
  silent_server(const silent_server&) = delete;
  silent_server& operator=(const silent_server&) = delete;

  /// 0 if no socket could be bound.
  uint16_t port() const { return port_; }

private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

} // namespace outbox
