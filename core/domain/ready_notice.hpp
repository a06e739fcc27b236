// The wake-up of dispatchers through the database: the routing transaction
// NOTIFYs the deliveries' ready channel once per queue that got deliveries,
// and every node with dispatchers LISTENs there and wakes its dispatcher of
// that queue. Nodes need no directory of each other for it, so it works
// whether the status node is up or not.
//
// The payload is the routing node's origin (a random token of the node, no
// spaces), a space, and the queue (queue names may hold spaces, up to 255
// bytes: within NOTIFY's 8000). The router wakes its own node's dispatchers
// directly, so a node skips the notices of its own origin.
#pragma once

#include <optional>
#include <string>

namespace outbox {

struct ready_notice {
  std::string origin;
  std::string queue;
};

/// A new random origin for this node (16 hex digits).
std::string new_wake_origin();

std::string ready_payload(const std::string& origin, const std::string& queue);

/// nullopt when `payload` is not one of ready_payload's.
std::optional<ready_notice> parse_ready_payload(const std::string& payload);

} // namespace outbox
