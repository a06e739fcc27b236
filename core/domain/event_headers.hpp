// Which event headers a job message carries (docs/design.md "Wire
// contract", "Headers"): the names the contract keeps for the relay and the
// broker, the trace-context rules at publish time, and the mapping onto the
// AMQP headers table. The SQL side (schema/010_trace_context.sql) refuses
// the same names: change them together.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace outbox {

using header_map = std::map<std::string, std::string>;

/// What a job message's headers table may hold in all (names and values;
/// RabbitMQ's frame_max is 128 KiB and the whole content header must fit
/// in one frame, while an event may hold 64 headers of 4 KiB).
constexpr size_t max_wire_header_bytes = 64 * 1024;

/// True for a name an event header may not take, compared ignoring case,
/// `_` and `-`: anything starting with `outbox` (the relay's own), `x-`
/// (RabbitMQ's and its plugins': x-death, x-delay, x-match, ...); `cc` and
/// `bcc` (RabbitMQ copies the message to the queues they name); the AMQP
/// basic properties (content_type, content_encoding, delivery_mode,
/// priority, correlation_id, reply_to, expiration, message_id, timestamp,
/// type, user_id, app_id, cluster_id) and the job message's fields (job,
/// eventType, payload), which clients often show beside the headers.
bool is_reserved_header(const std::string& name);

/// The publish-time rules beyond the sizes of event_limits.hpp: no
/// reserved name, `traceparent` and `tracestate` spelled in lowercase and
/// valid (trace_context.hpp). Safe text naming the rule, nullopt if fine.
std::optional<std::string> header_problem(const header_map& headers);

/// The headers a job message carries: every event header but reserved
/// names, a traceparent or tracestate that breaks its rules (rows written
/// past the publish function), and what goes past max_wire_header_bytes
/// (traceparent and tracestate first, then by name).
header_map wire_headers(const header_map& headers);

/// The string members of a JSON object (the events table's `headers`
/// column as text); anything else in it is skipped, and "" or text that is
/// no object gives none. Rows written past the publish function may hold
/// anything.
header_map headers_from_json(const std::string& json);

} // namespace outbox
