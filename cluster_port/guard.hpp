#pragma once

#include <cstdint>

#include "cluster_port/handshake_table.hpp"

namespace outbox::cluster_port {

/// Guards this process's cluster port (the status node's `--listen`)
/// against connections that never become members: each one's handshake
/// has a deadline, each address a bound of unfinished handshakes, a plain
/// port's first BASP header a bound of payload, and every refusal is
/// logged (at most one line per kind every 10 s) and counted. CAF 0.17.6
/// has none of this and no hook for it: the socket calls it makes are
/// interposed (cluster_port/socket_hooks.cpp, cluster_port/ssl_error_queue.cpp)
/// and report here. Until watch(), and whenever no connection is tracked,
/// the hooks cost an atomic load; while one is, a close (and a read, on a
/// plain port) takes the guard's mutex briefly.
void watch(uint16_t port, bool tls, port_limits limits = {});

/// Whether this process watches a cluster port (it listens for nodes).
bool watched();

/// The refusals so far, by kind, and the connections whose handshake is
/// not done (for /metrics).
port_figures figures();

// Called by the interposed socket calls.

/// accept() on `listening` returned `fd`.
void on_accept(int listening, int fd);

/// The TLS handshake of `fd` is done.
void on_tls_done(int fd);

/// The TLS handshake of `fd` failed for `why`.
void on_tls_failed(int fd, refusal why);

/// recv() read `size` bytes of `fd` into `data`: false when the bytes end
/// the connection (the caller fails the read).
bool on_recv(int fd, const char* data, long size);

/// `fd` is about to be closed.
void on_close(int fd);

} // namespace outbox::cluster_port
