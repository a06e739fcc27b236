// The lifecycle log lines (DESIGN.md "Logging"): stored, superseded or
// merged, published, retry scheduled (with the next try), completed,
// failed, expired. One
// key=value line each, ids and names only: never a payload or a reason
// that came from outside.
#pragma once

#include "core/delivery.hpp"
#include "core/routing_repository.hpp"

namespace outbox {

/// After the broker confirmed a job message.
void log_published(const job_to_send& job);

/// After the broker did not take a job message (`reason`: ours, e.g.
/// "publish nacked"); its retry-or-fail transition is logged next.
void log_publish_failed(const job_to_send& job, const std::string& reason);

/// After an application's transaction added an event (the producer API).
void log_stored(int64_t event_id, const std::string& event_type);

/// After routing replaced or merged a waiting delivery.
void log_superseded(const superseded_delivery& s);

/// After a pass changed a delivery's state; `logger_name` is the actor's role.
void log_transition(const char* logger_name, const delivery_transition& t);

} // namespace outbox
