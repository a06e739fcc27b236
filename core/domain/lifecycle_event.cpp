#include "core/domain/lifecycle_event.hpp"

#include "core/domain/trace_context.hpp"

namespace outbox {

const char* to_string(lifecycle_kind x) {
  switch (x) {
    case lifecycle_kind::stored: return "stored";
    case lifecycle_kind::superseded: return "superseded";
    case lifecycle_kind::merged: return "merged";
    case lifecycle_kind::published: return "published";
    case lifecycle_kind::publish_failed: return "publish_failed";
    case lifecycle_kind::retry_scheduled: return "retry_scheduled";
    case lifecycle_kind::completed: return "completed";
    case lifecycle_kind::failed: return "failed";
    case lifecycle_kind::expired: return "expired";
  }
  return "unknown";
}

lifecycle_event stored_event(int64_t event_id, const std::string& event_type,
                             std::string trace_id) {
  lifecycle_event ev;
  ev.trace_id = std::move(trace_id);
  ev.kind = lifecycle_kind::stored;
  ev.event_id = event_id;
  ev.event_type = event_type;
  return ev;
}

lifecycle_event superseded_event(const superseded_delivery& s) {
  lifecycle_event ev;
  ev.kind = s.merged ? lifecycle_kind::merged : lifecycle_kind::superseded;
  ev.event_id = s.event_id;
  ev.delivery_id = s.delivery_id;
  ev.job = s.job;
  ev.queue = s.queue;
  ev.superseded_by = s.superseded_by;
  return ev;
}

namespace {

lifecycle_event sent_event(lifecycle_kind kind, const job_to_send& j) {
  lifecycle_event ev;
  ev.kind = kind;
  ev.event_id = j.event_id;
  ev.delivery_id = j.delivery_id;
  ev.event_type = j.event_type;
  ev.job = j.job;
  ev.queue = j.queue;
  ev.attempts = j.attempts;
  ev.last_attempt = j.last_attempt;
  ev.replayed = j.replayed;
  ev.trace_id = trace_id_of(j.headers);
  return ev;
}

} // namespace

lifecycle_event published_event(const job_to_send& j) {
  return sent_event(lifecycle_kind::published, j);
}

lifecycle_event publish_failed_event(const job_to_send& j, std::string reason) {
  auto ev = sent_event(lifecycle_kind::publish_failed, j);
  ev.reason = std::move(reason);
  return ev;
}

namespace {

// The kind of step that reaching `status` in a pass is.
lifecycle_kind kind_of(delivery_status status) {
  switch (status) {
    case delivery_status::pending: return lifecycle_kind::retry_scheduled;
    case delivery_status::completed: return lifecycle_kind::completed;
    case delivery_status::failed: return lifecycle_kind::failed;
    case delivery_status::superseded: return lifecycle_kind::superseded;
    case delivery_status::dispatched: return lifecycle_kind::published;
    case delivery_status::expired: break;
  }
  return lifecycle_kind::expired;
}

} // namespace

lifecycle_event transition_event(const delivery_transition& t) {
  lifecycle_event ev;
  ev.kind = kind_of(t.status);
  ev.event_id = t.event_id;
  ev.delivery_id = t.delivery_id;
  ev.job = t.job;
  ev.queue = t.queue;
  ev.attempts = t.attempts;
  ev.database = t.database;
  if (t.next_try)
    ev.next_try_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       t.next_try->time_since_epoch())
                       .count();
  return ev;
}

void add_trace_ids(std::vector<lifecycle_event>& events,
                   const std::map<int64_t, std::string>& trace_ids) {
  for (auto& ev : events)
    if (auto it = trace_ids.find(ev.delivery_id);
        ev.trace_id.empty() && it != trace_ids.end())
      ev.trace_id = it->second;
}

} // namespace outbox
