// Part of outboxd (and of the tests that run a node in their process):
// the socket calls CAF 0.17.6's middleman makes, interposed so that the
// cluster port's guard (cluster_port/guard.hpp) sees every connection it
// accepts, what a plain port reads before the handshake, and every close.
// As in cluster_port/ssl_error_queue.cpp: the executable's definition of a symbol
// a shared library uses wins, and each one calls the C library's after
// (or before) reporting. Every other socket of the process (libpq,
// rabbitmq-c) passes through at the cost of an atomic load while no
// stranger is tracked, and of the guard's mutex, briefly, while one is.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "cluster_port/guard.hpp"
#include "cluster_port/next_definition.hpp"

using outbox::cluster_port::next_definition;

extern "C" {

int accept(int fd, sockaddr* addr, socklen_t* len) {
  static auto next = next_definition<int (*)(int, sockaddr*, socklen_t*)>("accept");
  auto out = next(fd, addr, len);
  if (out >= 0) {
    auto saved = errno;
    outbox::cluster_port::on_accept(fd, out);
    errno = saved;
  }
  return out;
}

ssize_t recv(int fd, void* buf, size_t len, int flags) {
  static auto next = next_definition<ssize_t (*)(int, void*, size_t, int)>("recv");
  auto out = next(fd, buf, len, flags);
  auto saved = errno;
  if (!outbox::cluster_port::on_recv(fd, static_cast<const char*>(buf), out)) {
    errno = ECONNRESET;
    return -1;
  }
  errno = saved;
  return out;
}

int close(int fd) {
  static auto next = next_definition<int (*)(int)>("close");
  auto saved = errno;
  outbox::cluster_port::on_close(fd);
  errno = saved;
  return next(fd);
}

} // extern "C"
