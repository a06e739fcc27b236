// Who a job message is for when its body cannot be read: the relay sets
// message_id = delivery id, correlation_id = dispatch id and type = job, so
// the worker can still answer `failed` for a body it refused.
#pragma once

#include <optional>
#include <string>

#include "core/amqp/amqp_client.hpp"
#include "core/domain/delivery.hpp"

namespace outbox {

/// The delivery id, dispatch id and job from `m`'s AMQP properties, if
/// they have the relay's form; the outcome is left to the caller.
std::optional<send_result> attribute_by_properties(const incoming_message& m);

} // namespace outbox
