// Wakes the router when events are inserted: LISTEN on the events table's
// channel (a statement-level trigger NOTIFYs at commit). Losing it only
// delays routing until the router's timer: it reconnects with backoff.
// While the router passes by itself under load it says so (listen_atom
// false) and the listener UNLISTENs; told to listen again, it LISTENs and
// wakes the router once for what committed meanwhile.
#pragma once

#include <string>

#include <caf/blocking_actor.hpp>

#include "actors/messages.hpp"

namespace outbox {

/// A blocking actor (always detached); stops on an exit message.
void notify_listener(caf::blocking_actor* self, std::string database_url,
                     std::string channel, router_actor router);

} // namespace outbox
