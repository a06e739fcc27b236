#include "core/lifecycle_log.hpp"

#include "core/logging.hpp"
#include "core/timestamp.hpp"

namespace outbox {

void log_stored(int64_t event_id, const std::string& event_type) {
  logger("producer")->info("event=stored outboxEventId={} eventType={}",
                           event_id, kv(event_type));
}

void log_superseded(const superseded_delivery& s) {
  logger("router")->info("event={} outboxEventId={} outboxDeliveryId={} job={} "
                         "queue={} status=superseded supersededBy={}",
                         s.merged ? "delivery_merged" : "delivery_superseded",
                         s.event_id, s.delivery_id, kv(s.job), kv(s.queue),
                         s.superseded_by);
}

namespace {

delivery_fields sent_fields(const job_to_send& j) {
  delivery_fields f;
  f.event_id = j.event_id;
  f.delivery_id = j.delivery_id;
  f.event_type = j.event_type;
  f.job = j.job;
  f.queue = j.queue;
  f.status = "dispatched";
  f.attempts = j.attempts;
  return f;
}

} // namespace

void log_published(const job_to_send& j) {
  logger("dispatcher")->info("event=published {} lastAttempt={}",
                             format_fields(sent_fields(j)), j.last_attempt);
}

void log_publish_failed(const job_to_send& j, const std::string& reason) {
  auto f = sent_fields(j);
  f.reason = reason;
  logger("dispatcher")->warn("event=publish_failed {}", format_fields(f));
}

void log_transition(const char* logger_name, const delivery_transition& t) {
  const char* what = t.status == "pending"     ? "retry_scheduled"
                     : t.status == "completed" ? "delivery_completed"
                     : t.status == "failed"    ? "delivery_failed"
                                               : "delivery_expired";
  auto line = std::string{"event="} + what + " outboxEventId="
              + std::to_string(t.event_id) + " outboxDeliveryId="
              + std::to_string(t.delivery_id) + " job=" + kv(t.job)
              + " queue=" + kv(t.queue) + " status=" + t.status
              + " attempts=" + std::to_string(t.attempts);
  if (t.next_try)
    line += " nextTry=" + format_timestamp(*t.next_try);
  auto log = logger(logger_name);
  if (t.status == "completed" || t.status == "pending")
    log->info("{}", line);
  else
    log->warn("{}", line);
}

} // namespace outbox
