// The wire contract (docs/design.md "Wire contract"): the job message the relay
// publishes and the result message a worker sends back. Parsing is strict:
// anything that is not exactly a result message is refused with a reason
// that never quotes the message itself.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/amqp/amqp_client.hpp"
#include "core/domain/delivery.hpp"
#include "core/domain/event.hpp"

namespace outbox {

/// A delivery id as the wire writes it: 1 to 18 decimal digits, above 0.
std::optional<int64_t> parse_decimal_id(const std::string& s);

/// True for a UUID in its 36-character text form (a dispatch id).
bool is_uuid(const std::string& s);

/// The AMQP header a job message of a config of several databases names
/// its database with.
constexpr const char* database_header = "outbox-database";

/// The durable queue a queue's workers send their results to.
std::string results_queue(const std::string& queue);

/// Where the relay parks the results of `database` that a results queue
/// shared by several databases could not apply (its database was down):
/// `<queue>.results.<database>`.
std::string parked_results_queue(const std::string& queue,
                                 const std::string& database);

/// The job message body: job, eventType, the three ids (as decimal or UUID
/// strings), outboxLastAttempt and the payload (embedded as JSON when the
/// event's content type is application/json, else as a JSON string).
std::string job_message_body(const job_to_send& job);

/// The longest per-message expiration RabbitMQ takes (ten years): a
/// longer one is refused with a channel error (`value_too_large`).
constexpr int64_t max_expiration_ms = 315'360'000'000;

/// The message's `expiration` property for a lifetime of `ms`: none for 0
/// or less, at most max_expiration_ms.
std::string expiration_property(int64_t ms);

/// The whole message: body plus the properties the contract names
/// (message_id = delivery id, correlation_id = dispatch id, type = job,
/// expiration = the job's expiration_ms), and the event's headers as AMQP
/// headers (wire_headers in core/domain/event_headers.hpp: never a reserved
/// name).
outgoing_message job_message(const job_to_send& job);

/// A job message published directly, without the outbox (config
/// `enabled`, `except`): job, eventType, `"outboxDirect": true`,
/// `"outboxLastAttempt": true` (no retry follows) and the payload, but no
/// ids, and no result is expected. message_id = `message_id`, type = job;
/// `expiration_ms` > 0 lets the broker drop it once its time to live is
/// over while it waits in the queue.
outgoing_message direct_job_message(const std::string& job,
                                    const std::string& queue, const event& ev,
                                    std::string message_id,
                                    int64_t expiration_ms);

/// The most results one result message may carry.
constexpr size_t max_results_per_message = 1000;

/// What a result message carries. A result message is one result object,
/// or a JSON array of 1 to max_results_per_message of them (a worker's
/// batch: one message on the broker instead of one per job). Parsing is
/// strict: bad JSON or UTF-8, a missing or mistyped field, an unknown key
/// or outcome, or a NUL in `job` or `reason` is refused with a safe reason
/// (which field, which rule; never a quote of the message). Each entry of
/// an array is refused alone, its reason naming its place (`result
/// message: entry 3: outcome must be ...`); the others count. `reason` is
/// capped at 200 bytes.
struct result_message_content {
  std::vector<send_result> results;
  std::vector<std::string> refused; ///< why, per entry refused
};

result_message_content read_result_message(const std::string& body);

/// A job message as a worker reads it.
struct job_message_fields {
  int64_t event_id = 0;
  int64_t delivery_id = 0;
  std::string dispatch_id;
  std::string job;
  std::string event_type;
  bool last_attempt = false;
  /// outboxReplayed: an operator replayed the event (outboxctl replay).
  bool replayed = false;
  /// outboxExpiresAt (ordered routes): the worker must not start the job
  /// after it; the send has timed out by then (docs/ordering.md).
  std::optional<time_point> expires_at;
  std::string payload_json; ///< the payload, as JSON text
  /// Published directly (outboxDirect): the ids are 0, last_attempt is
  /// true, and the worker sends no result.
  bool direct = false;
  /// The message's AMQP headers (the event's headers, see wire_headers):
  /// not in the body, so the reader of the message sets them.
  std::map<std::string, std::string> headers;
};

/// Parses a job message body strictly: every field present with its type,
/// ids as the relay writes them (a direct message: job, eventType,
/// payload). errc::deserialize_failed with a safe reason otherwise.
caf::expected<job_message_fields> parse_job_message(const std::string& body);

/// For a job message that failed to parse: the delivery id, dispatch id and
/// job, if at least those are readable, so the worker can report `failed`.
std::optional<send_result> attribute_job_message(const std::string& body);

/// The result message a worker sends (the worker library and tests use it).
std::string result_message_body(const send_result& r);

/// The whole result message for `queue`'s results queue, with the same
/// properties as the job message it answers, and its traceparent as an
/// AMQP header too when it has one. (In the body every result object
/// carries its own: an array answers jobs of many traces.)
outgoing_message result_message(const std::string& queue, const send_result& r);

/// The results of a worker's batch, in as few messages as the contract
/// allows: a single result as its object, more as arrays of at most
/// max_results_per_message, in order (result i travels in message
/// i / max_results_per_message).
std::vector<outgoing_message>
result_batch_messages(const std::string& queue,
                      const std::vector<send_result>& rs);

} // namespace outbox
