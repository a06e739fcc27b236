// Built-in retention (docs/operations.md "Retention"): how long final
// deliveries are kept per status, and what the retention actor needs from
// the database. One node at a time deletes: the one that holds the
// retention lock.
#pragma once

#include <array>
#include <cstdint>

#include <caf/expected.hpp>

#include "core/domain/delivery_status.hpp"

namespace outbox {

/// `retentionHours` of the config. A window of 0 keeps that status forever;
/// `enabled` false (`"retentionHours": false`) keeps everything.
struct retention_policy {
  bool enabled = true;
  double completed_hours = 6;
  double superseded_hours = 6;
  double failed_hours = 168;
  double expired_hours = 168;

  /// The window of a final status in hours (0 for an open one: never).
  double hours_of(delivery_status s) const;

  /// The longest window: quarantined events are kept that long.
  double longest_hours() const;
};

/// The final statuses, in the order retention goes through them.
const std::array<delivery_status, 4>& final_delivery_statuses();

/// The largest window the config takes: 100 years.
constexpr double max_retention_hours = 876000;

/// Rows deleted by one statement (or summed over several).
struct deleted_rows {
  int64_t deliveries = 0;
  int64_t events = 0;
};

/// What a turn of the ring did (schema/022: the events and the completion
/// log as four partitions by time, emptied whole). `deleted` counts the
/// rows a TRUNCATE took; `kept` the rows moved out of its partition first.
struct ring_outcome {
  bool span_changed = false; ///< the span was set this time: nothing emptied
  bool emptied = false;      ///< a partition was truncated
  bool busy = false;         ///< its lock was not free in time: next pass
  bool behind = false;       ///< it holds what routing has not passed: next turn
  deleted_rows deleted;      ///< deliveries: the completion log's rows
  deleted_rows kept;
};

/// The retention actor's seam to the database; a fake in the unit tests.
class retention_store {
public:
  virtual ~retention_store() = default;

  /// Whether this store leads retention: it holds the lock, or takes it
  /// now. False while another node holds it; an error when the database
  /// cannot be reached (the lead is lost with the connection).
  virtual caf::expected<bool> lead() = 0;

  /// Lets go of the lock, if held, and of the connection: the status node
  /// gave this database's retention to another node (many databases).
  virtual void step_down() = 0;

  /// Deletes up to `batch` deliveries of the final `status` that finished
  /// more than `hours` ago from the deliveries table, and the events left
  /// without deliveries by it. (Completions in the completion log go with
  /// their partition of the ring.)
  virtual caf::expected<deleted_rows>
  delete_finished(delivery_status status, double hours, int32_t batch) = 0;

  /// Sets the ring's span for the completed window, or empties the ring's
  /// oldest partition when its turn has come (core/pg/retention_ring.hpp).
  /// `longest_hours` keeps a quarantined event (0: forever).
  virtual caf::expected<ring_outcome> turn_ring(double completed_hours,
                                                double longest_hours) = 0;

  /// Deletes up to `batch` quarantined events quarantined more than
  /// `hours` ago.
  virtual caf::expected<int64_t> delete_quarantined_events(double hours,
                                                           int32_t batch) = 0;
};

} // namespace outbox
