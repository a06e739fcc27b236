#include "cluster_port/guard.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "core/base/logging.hpp"

namespace outbox::cluster_port {

namespace {

using clock = std::chrono::steady_clock;

// Whether a port is watched, whether it is a plain one (only then does a
// read need looking at), and whether any connection is tracked: the hooks
// of every socket call in the process (libpq's and rabbitmq-c's too) read
// these first, and take the mutex only for a connection of the port.
std::atomic<bool> watching{false};
std::atomic<bool> plain_port{false};
std::atomic<size_t> tracked{0};

struct state {
  std::mutex mutex;
  uint16_t port = 0;
  handshake_table table{port_limits{}};
  refusal_log_limit log_limit{std::chrono::seconds{10}};
  std::array<std::atomic<uint64_t>, refusal_kinds> counts{};
};

// Never destroyed: the deadline thread and the hooks may run while the
// process exits.
state& the_state() {
  static auto* s = new state;
  return *s;
}

uint16_t local_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return 0;
  if (addr.ss_family == AF_INET)
    return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

std::string peer_address(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return "unknown";
  char text[INET6_ADDRSTRLEN] = {};
  const void* at = addr.ss_family == AF_INET6
                     ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr)
                     : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&addr)->sin_addr);
  if (::inet_ntop(addr.ss_family, at, text, sizeof text) == nullptr)
    return "unknown";
  return text;
}

// The log lines decided under the mutex, written after it is released
// (so that no socket call of the process waits for stderr).
struct pending_lines {
  struct line {
    refusal why;
    std::string address;
    uint16_t port;
    uint64_t unlogged;
  };
  std::vector<line> lines;

  ~pending_lines() {
    for (auto& l : lines)
      logger("cluster")->warn("event=cluster_connection_refused reason={} peer={} "
                              "port={} unlogged_since_last={}",
                              refusal_name(l.why), l.address, l.port, l.unlogged);
  }
};

// Counts one refusal and decides its log line; the caller holds the mutex.
void record(state& s, refusal why, const std::string& address, pending_lines& out) {
  ++s.counts[static_cast<size_t>(why)];
  auto verdict = s.log_limit.admit(why, clock::now());
  if (verdict.log)
    out.lines.push_back({why, address, s.port, verdict.suppressed});
}

void sync_tracked(state& s) {
  tracked.store(s.table.size());
}

// Closes the connections past the deadline, a few times a second. Only
// shutdown(): CAF then reads the end of the stream, fails the handshake
// and closes the socket itself, so its own state stays right; and the
// number cannot have been reused, because CAF's close goes through
// on_close, which takes the same mutex.
void deadline_loop() {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds{200});
    if (tracked.load() == 0)
      continue;
    auto& s = the_state();
    pending_lines log;
    std::lock_guard<std::mutex> guard{s.mutex};
    for (auto fd : s.table.overdue(clock::now())) {
      record(s, refusal::handshake_timeout, s.table.address(fd), log);
      ::shutdown(fd, SHUT_RDWR);
    }
  }
}

} // namespace

void watch(uint16_t port, bool tls, port_limits limits) {
  auto& s = the_state();
  {
    std::lock_guard<std::mutex> guard{s.mutex};
    s.port = port;
    s.table = handshake_table{limits};
    plain_port = !tls;
    sync_tracked(s);
  }
  if (!watching.exchange(true))
    std::thread{deadline_loop}.detach();
}

bool watched() {
  return watching.load();
}

port_figures figures() {
  port_figures out;
  auto& s = the_state();
  for (size_t i = 0; i < refusal_kinds; ++i)
    out.refused[i] = s.counts[i].load();
  out.half_open = tracked.load();
  return out;
}

void on_accept(int listening, int fd) {
  if (!watching.load() || fd < 0)
    return;
  auto& s = the_state();
  auto port = local_port(listening);
  pending_lines log;
  std::lock_guard<std::mutex> guard{s.mutex};
  if (port == 0 || port != s.port)
    return;
  auto address = peer_address(fd);
  auto refused = s.table.accepted(fd, address, clock::now());
  sync_tracked(s);
  if (refused) {
    record(s, *refused, address, log);
    ::shutdown(fd, SHUT_RDWR);
  }
}

void on_tls_done(int fd) {
  if (tracked.load() == 0)
    return;
  auto& s = the_state();
  std::lock_guard<std::mutex> guard{s.mutex};
  s.table.completed(fd);
  sync_tracked(s);
}

void on_tls_failed(int fd, refusal why) {
  if (tracked.load() == 0)
    return;
  auto& s = the_state();
  pending_lines log;
  std::lock_guard<std::mutex> guard{s.mutex};
  auto address = s.table.address(fd);
  if (auto counted = s.table.failed(fd, why))
    record(s, *counted, address, log);
  sync_tracked(s);
}

bool on_recv(int fd, const char* data, long size) {
  if (tracked.load() == 0 || !plain_port.load())
    return true;
  auto& s = the_state();
  pending_lines log;
  std::lock_guard<std::mutex> guard{s.mutex};
  if (!s.table.tracks(fd))
    return true;
  auto address = s.table.address(fd);
  handshake_table::plain_verdict verdict;
  if (size > 0)
    verdict = s.table.plain_bytes(fd, data, static_cast<size_t>(size));
  else if (size == 0)
    verdict.refused = s.table.failed(fd, refusal::closed_early);
  sync_tracked(s);
  if (verdict.refused)
    record(s, *verdict.refused, address, log);
  if (verdict.pass)
    return true;
  ::shutdown(fd, SHUT_RDWR);
  return false;
}

void on_close(int fd) {
  if (tracked.load() == 0)
    return;
  auto& s = the_state();
  pending_lines log;
  std::lock_guard<std::mutex> guard{s.mutex};
  if (!s.table.tracks(fd))
    return;
  // A connection CAF closed before its handshake was done, for a reason
  // of its own (a peer that left is counted when its end is read).
  auto address = s.table.address(fd);
  if (auto counted = s.table.failed(fd, refusal::closed_early))
    record(s, *counted, address, log);
  sync_tracked(s);
}

} // namespace outbox::cluster_port
