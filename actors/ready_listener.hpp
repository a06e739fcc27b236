// Wakes this node's dispatchers when a router of another node gave their
// queue deliveries: LISTEN on the deliveries' ready channel, one connection
// per node (core/domain/ready_notice.hpp). Needs no status node. While the
// connection is down the dispatchers wait for their timers: the listener
// tells the node agent (the status view shows the node degraded),
// reconnects with backoff and then wakes every dispatcher once for what
// became ready meanwhile.
#pragma once

#include <string>
#include <vector>

#include <caf/blocking_actor.hpp>

#include "actors/node_agent_actor.hpp"
#include "core/domain/stores.hpp"

namespace outbox {

struct ready_listener_args {
  notice_listener_factory listen; ///< LISTENs on the ready channel
  std::string channel;            ///< its name, for the log
  std::string origin; ///< this node's: its router wakes them directly
  std::vector<dispatcher_entry> dispatchers;
  node_agent_actor agent; ///< may be null (a node on its own, tests)
  /// Its database, when the config names several: its reports say so.
  std::string database;
};

/// A blocking actor (always detached); stops on an exit message.
void ready_listener(caf::blocking_actor* self, ready_listener_args args);

} // namespace outbox
