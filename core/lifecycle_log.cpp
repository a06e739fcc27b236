#include "core/lifecycle_log.hpp"

#include "core/logging.hpp"
#include "core/timestamp.hpp"

namespace outbox {

void log_published(const job_to_send& j) {
  delivery_fields f;
  f.event_id = j.event_id;
  f.delivery_id = j.delivery_id;
  f.event_type = j.event_type;
  f.job = j.job;
  f.queue = j.queue;
  f.status = "dispatched";
  f.attempts = j.attempts;
  logger("dispatcher")->info("event=published {} lastAttempt={}",
                             format_fields(f), j.last_attempt);
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
