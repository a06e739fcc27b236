// What the worker checks before a JSON parser sees a job message: a body
// too big or nested too deep would exhaust memory or the stack of a
// recursive parser (a message nested a million deep crashed the worker,
// and the broker handed it to the next one, and so on). Such a message is
// refused unread; when its AMQP properties name the delivery (the relay
// sets message_id = delivery id, correlation_id = dispatch id, type = job)
// the worker can still answer `failed` for it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "core/amqp_client.hpp"
#include "core/delivery.hpp"

namespace outbox {

/// The largest job message body the worker parses (RabbitMQ's own limit is
/// 128 MiB; an outbox payload is a record of what happened, not a file).
constexpr size_t max_job_message_bytes = 16 * 1024 * 1024;

/// The deepest nesting of objects and arrays the worker parses: the job
/// message itself is level 1, its payload's top level 2.
constexpr size_t max_job_message_depth = 256;

/// Why `m` must not be parsed (a safe reason: sizes and limits only), or
/// nullopt when it may be.
std::optional<std::string> screen_job_message(const incoming_message& m);

/// The delivery id, dispatch id and job from `m`'s AMQP properties, if
/// they have the relay's form; the outcome is left to the caller.
std::optional<send_result> attribute_by_properties(const incoming_message& m);

} // namespace outbox
