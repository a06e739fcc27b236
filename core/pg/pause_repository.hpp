// The operator's pauses of queues (outboxctl pause / resume,
// schema/018_queue_pauses.sql). The claim reads a pause itself
// (claim_sql.hpp room_sql); this is the operator's side and the status's.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "core/domain/schema_names.hpp"
#include "core/domain/status_counts.hpp"

namespace outbox {

class pg_connection;

class pause_repository {
public:
  explicit pause_repository(const schema_names& names);

  /// Pauses `queue` (again: the new pause replaces the old one, its start
  /// included), until resumed or, with `for_seconds`, until then.
  caf::expected<queue_pause> pause(pg_connection& conn, const std::string& queue,
                                   const std::string& by, const std::string& reason,
                                   std::optional<int64_t> for_seconds);

  /// Ends the pause of `queue`; false when it was not paused (or its pause
  /// had ended by itself).
  caf::expected<bool> resume(pg_connection& conn, const std::string& queue);

  /// The queues paused now, by name.
  caf::expected<std::map<std::string, queue_pause>> paused(pg_connection& conn);

private:
  std::string pause_sql_, resume_sql_, paused_sql_;
};

} // namespace outbox
