// A step in an event's or a delivery's life (docs/design.md "Lifecycle
// events"), as one typed value: the relay's actors log it and send it to
// their node's lifecycle group, where a C++ embedder and the status
// counters subscribe.
// Ids, names and times only: never a payload or a reason from outside.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "core/domain/delivery.hpp"
#include "core/domain/routing_result.hpp"

namespace outbox {

enum class lifecycle_kind : uint8_t {
  stored,          ///< the producer API added the event to its transaction
  superseded,      ///< a newer delivery of its key replaced it
  merged,          ///< a newer delivery of its key took its payload in
  published,       ///< the broker confirmed the job message
  publish_failed,  ///< the broker did not take it; a retry or fail follows
  retry_scheduled, ///< back to pending until `next_try_ms`
  completed,
  failed,
  expired,
};

/// "stored", "superseded", "merged", "published", "publish_failed",
/// "retry_scheduled", "completed", "failed" or "expired".
const char* to_string(lifecycle_kind x);

struct lifecycle_event {
  lifecycle_kind kind = lifecycle_kind::stored;
  int64_t event_id = 0;
  int64_t delivery_id = 0;   ///< 0 for `stored`
  std::string event_type;    ///< for `stored`, `published`, `publish_failed`
  std::string job, queue;    ///< "" for `stored`
  int32_t attempts = 0;      ///< failed attempts so far
  bool last_attempt = false; ///< `published`: the job message said so
  bool replayed = false;     ///< `published`: made by outboxctl replay
  int64_t next_try_ms = 0;   ///< `retry_scheduled`: Unix time in ms
  int64_t superseded_by = 0; ///< `superseded`, `merged`: the newer delivery
  std::string reason;        ///< `publish_failed`: our own text
  /// The 32 hex digits of the event's W3C trace id, "" without a valid
  /// traceparent header (an id, never a payload: fine in a log line).
  std::string trace_id;
  /// The database of a config of several (`databases`); "" otherwise: its
  /// ids are that database's.
  std::string database;
};

/// Receives lifecycle events where no actor is involved (the producer API).
using lifecycle_observer = std::function<void(const lifecycle_event&)>;

lifecycle_event stored_event(int64_t event_id, const std::string& event_type,
                             std::string trace_id = {});
lifecycle_event superseded_event(const superseded_delivery& s);
lifecycle_event published_event(const job_to_send& j);
lifecycle_event publish_failed_event(const job_to_send& j, std::string reason);
/// retry_scheduled, completed, failed or expired, after `t.status`.
lifecycle_event transition_event(const delivery_transition& t);

/// Gives each event of a delivery in `trace_ids` (delivery id -> trace id)
/// its trace id: the passes know it from what they sent or received, the
/// store's transitions do not carry it.
void add_trace_ids(std::vector<lifecycle_event>& events,
                   const std::map<int64_t, std::string>& trace_ids);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lifecycle_event& x) {
  return f(caf::meta::type_name("lifecycle_event"), x.kind, x.event_id,
           x.delivery_id, x.event_type, x.job, x.queue, x.attempts,
           x.last_attempt, x.replayed, x.next_try_ms, x.superseded_by, x.reason,
           x.trace_id, x.database);
}

} // namespace outbox
