// A stranger at a node's cluster port: the kinds of connection that never
// become a member (tests of cluster_port/, integration.node_tls and
// faults.cluster_port), and the node's count of each refusal.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace outbox::testing {

/// Connects to 127.0.0.1:`port` and closes at once.
void bare_connect(uint16_t port);

/// Connects, sends `bytes` and closes without waiting for an answer.
void send_and_leave(uint16_t port, const std::string& bytes);

/// A TLS handshake with 127.0.0.1:`port` as a client that trusts nothing
/// and shows the certificate `cert` with `key` (none when empty); whether
/// the server completed it (it never does for a stranger).
bool tls_attempt(uint16_t port, const std::string& cert = "",
                 const std::string& key = "");

/// A BASP header (CAF 0.17's 32 bytes, big-endian) of a client handshake
/// that claims a payload of almost 2 GiB.
std::string huge_basp_header();

/// A node's /metrics: its --http port, and the client certificate and key
/// it takes when the node runs TLS (empty: plain HTTP).
struct metrics_endpoint {
  uint16_t port = 0;
  std::string cert, key;
};

/// outbox_cluster_refused_connections_total by reason, from that node's
/// /metrics (empty when it did not answer).
std::map<std::string, double> refused_by_reason(const metrics_endpoint& at);

/// outbox_cluster_half_open_connections of that node (-1: no answer).
double half_open(const metrics_endpoint& at);

} // namespace outbox::testing
