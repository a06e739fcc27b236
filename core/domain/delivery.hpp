// Deliveries as the dispatch, result and sweep passes see them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/domain/delivery_status.hpp"
#include "core/domain/retry_policy.hpp"
#include "core/domain/route.hpp"

namespace outbox {

/// A claimed delivery, ready to publish as a job message.
struct job_to_send {
  int64_t delivery_id = 0;
  int64_t event_id = 0;
  std::string job;
  std::string queue;
  std::string dispatch_id;
  std::string event_type;
  std::string payload; ///< the merged payload if coalescing merged one
  std::string content_type;
  /// The event's headers as stored (the wire decides what it sends).
  std::map<std::string, std::string> headers;
  int32_t attempts = 0;     ///< failed attempts before this send
  bool last_attempt = false;
  /// Made by an operator's replay (outboxctl replay), not by routing.
  bool replayed = false;
  /// On an ordered route: the send's delivery timeout, the latest time a
  /// worker may start the job (the job message's outboxExpiresAt; see
  /// docs/ordering.md "A late send"). Unset on other routes.
  std::optional<time_point> start_by;
  /// How long the broker may keep the message unread (message_lifetime_ms
  /// in core/domain/retry_policy.hpp); 0 = no limit.
  int64_t expiration_ms = 0;
  /// How old the event was at the claim, by the database's clock (so that
  /// no clock of another host enters the commit→published latency).
  double event_age_seconds = 0;
};

/// A delivery that changed state in a pass, for the lifecycle log lines.
struct delivery_transition {
  int64_t event_id = 0;
  int64_t delivery_id = 0;
  std::string job;
  std::string queue;
  /// The status it reached: pending (a retry), completed, failed, expired.
  delivery_status status = delivery_status::pending;
  int32_t attempts = 0;
  std::optional<time_point> next_try; ///< for a retry
  /// A worker's result: seconds since its dispatch, by the database's clock.
  std::optional<double> since_dispatch_seconds;
  /// Its database, when a result handler serves several; "" otherwise.
  std::string database;
};

/// What a worker (or the relay itself) reports about one send.
enum class outcome { completed, retry, failed };

/// Returns "completed", "retry" or "failed".
const char* to_string(outcome x);

/// Parses the wire spelling of an outcome.
std::optional<outcome> parse_outcome(const std::string& text);

/// The result of one send, to apply if it still matches the delivery.
struct send_result {
  int64_t delivery_id = 0;
  std::string dispatch_id;
  std::string job;
  outcome result = outcome::completed;
  std::string reason; ///< safe text only
  /// The W3C traceparent of the job it answers ("" if none): the worker
  /// sends it back, so the result's log lines carry the trace id.
  std::string traceparent;
};

/// Why a result changed nothing.
enum class result_verdict {
  applied,
  unknown_delivery, ///< no delivery with that id
  stale,            ///< not dispatched, or another dispatch id
  wrong_job,        ///< the job does not match the delivery
  /// Its database could not take it now: parked in that database's queue
  /// of parked results, applied from there (a results queue several
  /// databases share; core/domain/stores.hpp result_parker).
  parked,
};

} // namespace outbox
