// The read-only counts `outboxctl status` shows: never payloads.
#pragma once

#include <cstdint>
#include <map>
#include <vector>
#include <string>

#include <caf/expected.hpp>

#include "core/domain/delivery_status.hpp"
#include "core/domain/schema_names.hpp"
#include "core/domain/status_counts.hpp"
#include "core/pg/pause_repository.hpp"

namespace outbox {

class pg_connection;

class status_repository {
public:
  explicit status_repository(schema_names names);

  /// Reads the counts in one snapshot; zeros for empty tables.
  caf::expected<status_counts> read(pg_connection& conn);

private:
  std::string events_sql_, deliveries_sql_, keys_sql_, connections_sql_;
  pause_repository pauses_;
};

} // namespace outbox
