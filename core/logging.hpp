// Logging setup: spdlog, one key=value line per event. Call sites pass only
// safe fields (ids, types, job, queue, status, attempts, times): never the
// payload, a raw external error message or a credential.
#pragma once

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

/// Quotes a value for a key=value line when it holds spaces, quotes or '='.
std::string kv(const std::string& value);

} // namespace outbox
