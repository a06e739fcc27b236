#include "core/domain/lifecycle_log.hpp"

#include "core/base/logging.hpp"
#include "core/base/timestamp.hpp"

namespace outbox {

namespace {

// The names of the log lines predate the typed events; operators grep them.
const char* line_name(lifecycle_kind k) {
  switch (k) {
    case lifecycle_kind::superseded: return "delivery_superseded";
    case lifecycle_kind::merged: return "delivery_merged";
    case lifecycle_kind::completed: return "delivery_completed";
    case lifecycle_kind::failed: return "delivery_failed";
    case lifecycle_kind::expired: return "delivery_expired";
    default: return to_string(k);
  }
}

delivery_status status_after(lifecycle_kind k) {
  switch (k) {
    case lifecycle_kind::superseded:
    case lifecycle_kind::merged: return delivery_status::superseded;
    case lifecycle_kind::stored: // no delivery yet; not logged with a status
    case lifecycle_kind::published:
    case lifecycle_kind::publish_failed: return delivery_status::dispatched;
    case lifecycle_kind::retry_scheduled: return delivery_status::pending;
    case lifecycle_kind::completed: return delivery_status::completed;
    case lifecycle_kind::failed: return delivery_status::failed;
    case lifecycle_kind::expired: break;
  }
  return delivery_status::expired;
}

bool is_warning(lifecycle_kind k) {
  return k == lifecycle_kind::publish_failed || k == lifecycle_kind::failed
         || k == lifecycle_kind::expired;
}

} // namespace

void log_lifecycle(const char* logger_name, const lifecycle_event& ev) {
  auto log = logger(logger_name);
  auto level = is_warning(ev.kind) ? spdlog::level::warn : spdlog::level::info;
  if (!log->should_log(level))
    return;
  std::string line;
  if (ev.kind == lifecycle_kind::stored) {
    line = "event=stored outboxEventId=" + std::to_string(ev.event_id)
           + " eventType=" + kv(ev.event_type);
  } else {
    delivery_fields f;
    f.event_id = ev.event_id;
    f.delivery_id = ev.delivery_id;
    f.event_type = ev.event_type;
    f.job = ev.job;
    f.queue = ev.queue;
    f.status = to_string(status_after(ev.kind));
    f.attempts = ev.attempts;
    f.reason = ev.reason;
    line = std::string{"event="} + line_name(ev.kind) + " " + format_fields(f);
  }
  if (ev.kind == lifecycle_kind::published)
    line += std::string{ev.last_attempt ? " lastAttempt=true" : " lastAttempt=false"}
            + (ev.replayed ? " replayed=true" : "");
  if (ev.superseded_by != 0)
    line += " supersededBy=" + std::to_string(ev.superseded_by);
  if (ev.next_try_ms != 0)
    line += " nextTry="
            + format_timestamp(time_point{std::chrono::milliseconds{ev.next_try_ms}});
  if (!ev.trace_id.empty())
    line += " traceId=" + ev.trace_id;
  if (!ev.database.empty())
    line += " database=" + kv(ev.database);
  log->log(level, "{}", line);
}

} // namespace outbox
