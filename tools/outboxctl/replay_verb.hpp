// outboxctl replay --job JOB --queue QUEUE (--since TIME [--until TIME] |
// --event ID,...) [--event-type TYPE] [--dry-run]: new deliveries for
// retained events, with the route's current rules, marked replayed
// (core/pg/replay_repository.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/config.hpp"

namespace outbox {

struct replay_args {
  std::string job, queue;
  std::optional<std::string> since, until, event_type;
  std::vector<std::string> event_ids; ///< --event and positional ids
  bool dry_run = false;
};

/// Runs the replay; returns the exit code (0 done, 1 the database refused,
/// 2 bad arguments).
int run_replay_verb(const replay_args& args, const config& cfg);

} // namespace outbox
