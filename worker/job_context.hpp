// What a job handler receives: the ids of its delivery and send, whether
// this is the last attempt, and the payload (raw JSON, or typed through the
// serializer contract of core/domain/json_serializer.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include <caf/expected.hpp>

#include "core/domain/json_serializer.hpp"
#include "core/domain/trace_context.hpp"

namespace outbox {

struct job_context {
  int64_t event_id = 0;
  int64_t delivery_id = 0;  ///< stable over retries: an idempotency key
  std::string dispatch_id;  ///< new for every send
  std::string job;
  std::string event_type;
  bool last_attempt = false; ///< a failure now is final
  std::string payload_json;
  /// The job message's AMQP headers: the event's headers (such as the W3C
  /// `traceparent` and `tracestate`), never one the wire contract reserves.
  std::map<std::string, std::string> headers;
  /// An operator replayed the event (outboxctl replay): this delivery was
  /// made again for an event the worker may have seen before.
  bool replayed = false;

  /// The W3C traceparent the event was published with, "" if none. The
  /// worker sends it back with the result.
  std::string traceparent() const {
    auto it = headers.find(traceparent_header);
    return it == headers.end() ? std::string{} : it->second;
  }

  /// Reads the payload as `T` (checks `T::event_type` too).
  template <class T>
  caf::expected<T> payload_as() const {
    return read_event<T>(event_type, payload_json);
  }
};

/// Throw from a handler to ask for a retry. `what()` is sent back as the
/// reason: the handler vouches that it is safe (no data, no secrets).
class retryable_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Throw from a handler to fail the delivery for good with a safe reason.
/// Any other exception fails it too, with only the exception's type named.
class job_failed : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace outbox
