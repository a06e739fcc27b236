// A job message as a relay sends it, for tests that hand one to a worker
// or the wire without a relay: delivery 42 of event 7, job "J", event type
// "e", a JSON payload the example workers complete.
#pragma once

#include <map>
#include <string>

#include "core/domain/delivery.hpp"

namespace outbox::testing {

inline job_to_send sample_job(std::string queue,
                              std::map<std::string, std::string> headers = {}) {
  job_to_send j;
  j.delivery_id = 42;
  j.event_id = 7;
  j.job = "J";
  j.queue = std::move(queue);
  j.dispatch_id = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c";
  j.event_type = "e";
  j.payload = R"({"scenario":"ok"})";
  j.content_type = "application/json";
  j.headers = std::move(headers);
  return j;
}

} // namespace outbox::testing
