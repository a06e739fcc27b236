// The lifecycle log lines of a delivery (DESIGN.md "Logging"): published,
// retry scheduled (with the next try), completed, failed, expired. One
// key=value line each, ids and names only: never a payload or a reason
// that came from outside.
#pragma once

#include "core/delivery.hpp"

namespace outbox {

/// After the broker confirmed a job message.
void log_published(const job_to_send& job);

/// After a pass changed a delivery's state; `logger_name` is the actor's role.
void log_transition(const char* logger_name, const delivery_transition& t);

} // namespace outbox
