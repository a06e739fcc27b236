// Runs one job message through its handler and turns what happened into
// the result to send back: return → completed, retryable_error → retry,
// job_failed or any other exception → failed. Never throws.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "core/amqp/wire.hpp"
#include "core/domain/delivery.hpp"
#include "worker/job_context.hpp"

namespace outbox {

using job_handler = std::function<void(const job_context&)>;
using handler_map = std::map<std::string, job_handler>;

/// The result of running `job` (an unknown job fails: retries would not
/// help, and the relay's config names jobs this worker does not run).
send_result run_job(const job_message_fields& job, const handler_map& handlers);

} // namespace outbox
