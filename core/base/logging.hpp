// Logging setup: spdlog, one key=value line per event. Call sites pass only
// safe fields (ids, types, job, queue, status, attempts, times): never the
// payload, a raw external error message or a credential.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace outbox {

/// Returns the process's logger named `name` (created on first use), writing
/// "ts=... level=... logger=name event=... key=value ..." lines to stderr.
std::shared_ptr<spdlog::logger> logger(const std::string& name);

/// Sets the level of every outbox logger ("debug", "info", "warn", ...).
/// Returns false for an unknown level name.
bool set_log_level(const std::string& level);

/// The context of one delivery in a log line (docs/design.md "Logging"). Only
/// safe fields exist here: there is no slot for a payload or an error text
/// from outside.
struct delivery_fields {
  int64_t event_id = 0;
  int64_t delivery_id = 0;
  std::string event_type;
  std::string job;
  std::string queue;
  std::string status;
  int32_t attempts = 0;
  std::string reason; ///< a safe reason of ours, e.g. "nacked"
};

/// Formats "outboxEventId=1 outboxDeliveryId=2 eventType=... job=...
/// queue=... status=... attempts=N [reason=...]", quoting where needed.
std::string format_fields(const delivery_fields& f);

/// Quotes a value for a key=value line when it holds spaces, quotes or '='.
std::string kv(const std::string& value);

} // namespace outbox
