// The message types that cross nodes, registered with CAF; the unit tests
// round-trip each through CAF's serializer and io_dsl.
#pragma once

#include <caf/actor_system_config.hpp>

namespace outbox {

/// Registers every message type that crosses nodes. Call in the config's
/// constructor on every node (and in outboxctl).
void register_message_types(caf::actor_system_config& cfg);

} // namespace outbox
