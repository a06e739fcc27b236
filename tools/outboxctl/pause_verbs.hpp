// outboxctl pause QUEUE [--for DURATION] [--reason TEXT] and resume QUEUE:
// an operator's pause of a queue, kept in the database
// (schema/018_queue_pauses.sql) so that every dispatcher on every node
// honours it within a pass, also after a restart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/config/config.hpp"
#include "tools/outboxctl/admin_args.hpp"

namespace outbox {

/// True for "pause" and "resume".
bool is_pause_verb(const std::string& verb);

/// Runs pause or resume; returns the exit code (0 done, 1 the database
/// refused, 2 bad arguments).
int run_pause_verb(const std::string& verb, const admin_args& args,
                   const config& cfg);

/// A duration as `--for` takes it: a positive whole number and a unit (s,
/// m, h or d), at most 366 days; in seconds. nullopt when it is not one.
std::optional<int64_t> parse_pause_duration(const std::string& text);

/// Why `reason` cannot be stored ("" when it can): at most 200 bytes, no
/// control characters.
std::string reason_refused(const std::string& reason);

} // namespace outbox
