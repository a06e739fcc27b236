// What one node runs, as the bootstrap takes it: its roles, queues and
// cluster addresses, already checked (the command line is read and checked
// in cli/node_options.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace outbox {

/// The roles a node can take. Their names are in one table (node_settings.cpp).
enum class node_role { status, router, dispatcher, results, sweeper };

/// Every role, in the table's order (the default of a node).
const std::vector<node_role>& all_node_roles();

/// The role's name on the command line, in logs and in the status view.
const char* to_string(node_role r);

/// The names of `roles`, in their order.
std::vector<std::string> role_names(const std::vector<node_role>& roles);

/// The role of a name, nullopt for an unknown one.
std::optional<node_role> parse_node_role(const std::string& name);

/// True for the roles that run an actor per queue (dispatcher, results).
bool runs_per_queue(node_role r);

struct host_port {
  std::string host;
  uint16_t port = 0;
};

/// True for a host only this machine reaches: 127.0.0.0/8, ::1, localhost.
bool is_loopback_host(const std::string& host);

/// The files of mutual TLS between nodes (actors/node_tls.hpp). The CA
/// defines who may join: CAF 0.17.6 checks a peer's certificate against it,
/// never the peer's host name.
struct node_tls {
  std::string certificate; ///< PEM chain of this node
  std::string key;         ///< its PEM private key
  std::string ca_file;     ///< PEM bundle of the CAs a peer must be signed by
  std::string passphrase;  ///< of the key; "" when it is not encrypted
};

struct node_settings {
  std::vector<node_role> roles;
  std::vector<std::string> queues; ///< for dispatchers and result handlers
  /// The databases this node serves (--databases); empty: every one of
  /// the config.
  std::vector<std::string> databases;
  std::optional<host_port> listen; ///< where the status actor is published
  std::optional<host_port> join;   ///< the status node of the cluster
  bool once = false;
  int sleep_seconds = 1;
  /// --insecure: the status port is published in plain BASP off loopback,
  /// as the operator asked (a warning is logged at every start).
  bool insecure = false;
  std::optional<node_tls> tls; ///< every connection between nodes is TLS
  /// The subject CN of this node's certificate ("" without TLS): the first
  /// part of its node name, so that the status view shows it.
  std::string identity;
  /// How an operator's drain (outboxctl drain) stops this node: outboxd
  /// raises SIGTERM on itself, so that a drain is exactly a SIGTERM. Empty
  /// (tests, --once): the node refuses to be drained.
  std::function<void()> drain;

  bool has(node_role r) const;
  /// True when some role of this node runs an actor per queue.
  bool has_queue_roles() const;
};

} // namespace outbox
