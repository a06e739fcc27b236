// Publishing that survives a connection the broker dropped while it was
// idle: the messages found unsent go once more over a fresh connection.
// Only `unsent` ones are sent again: they provably never reached the broker,
// so a second send cannot duplicate them, and the delivery (or the worker's
// result) is not charged for a broken connection it never used.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include <caf/expected.hpp>

#include "core/amqp/amqp_client.hpp"

namespace outbox {

using amqp_connect_fn = std::function<caf::expected<std::unique_ptr<amqp_client>>()>;

/// Publishes `ms` on `client` (connecting first when it is null or broken);
/// if some came back `unsent`, replaces `client` by a new connection from
/// `connect` and sends those again, once. Statuses as publish_batch's;
/// `client` is null afterwards when the connection is broken.
std::vector<publish_status>
publish_resending(std::unique_ptr<amqp_client>& client,
                  const amqp_connect_fn& connect,
                  const std::vector<outgoing_message>& ms,
                  std::chrono::milliseconds timeout);

} // namespace outbox
