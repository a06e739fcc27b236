// Retention by partitions (schema/022_retention_ring.sql): the events and
// the completion log are a ring of four partitions, one span each, filled
// by the insert's clock. The retention leader sets the span from the
// completed window and, once a span, empties the partition the clock
// comes to next with TRUNCATE, after moving out of it every row that must
// outlive it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "core/domain/retention.hpp"
#include "core/domain/schema_names.hpp"

namespace outbox {

class pg_connection;

/// The partitions of each ring table.
constexpr int ring_partitions = 4;

/// The span of a ring partition for a completed window: the partition
/// emptied next was last written two spans ago, so its rows are at least
/// the window old.
double ring_span_seconds(double completed_window_seconds);

class retention_ring {
public:
  explicit retention_ring(schema_names names);

  /// Sets the ring's span for `window_seconds` (the completed window) if
  /// it differs, or else empties the partition the clock comes to next,
  /// if the span has held for a whole turn of the ring and the partition
  /// holds anything. `longest_seconds` keeps a quarantined event (0:
  /// forever). One short transaction; never waits more than 200 ms for
  /// the partition's lock. A partition that still holds events the router
  /// has not passed (a backlog) or that a recovery may need waits for its
  /// next turn.
  caf::expected<ring_outcome> turn(pg_connection& conn, double window_seconds,
                                   double longest_seconds);

private:
  caf::expected<ring_outcome> set_span(pg_connection& conn, double span);
  caf::expected<ring_outcome> empty(pg_connection& conn, int target,
                                    double window_seconds, double longest_seconds);

  /// The rows of the partition whose turn it is, counted once per turn.
  struct partition_count {
    int target;
    int64_t events, logged;
  };

  schema_names names_;
  std::string state_sql_;
  std::optional<partition_count> counted_;
};

} // namespace outbox
