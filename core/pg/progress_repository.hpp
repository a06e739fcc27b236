// Read-only progress of the relay over events and deliveries, for what
// waits on it and measures it (the benchmark, load tests): whether anything
// is still open, how many deliveries have a status, and when each event
// moved. Counts and times only: never a payload.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/delivery_status.hpp"

#include "core/domain/schema_names.hpp"

namespace outbox {

class pg_connection;

/// When one event moved, by the database's clock: seconds since the epoch,
/// 0 while it has not.
struct event_progress {
  int64_t event_id = 0;
  double created = 0, routed = 0;
  double last_dispatched = 0, last_completed = 0; ///< over its deliveries
};

/// One outbox table as PostgreSQL sees it: what it takes on disk and how
/// many rows it holds, live and dead (what a vacuum has yet to reclaim).
struct table_stats {
  int64_t bytes = 0;          ///< heap, indexes and TOAST: pg_total_relation_size
  int64_t live = 0, dead = 0; ///< pg_stat_user_tables n_live_tup, n_dead_tup
  int64_t rows = 0;           ///< count(*)
};

/// Both outbox tables at one moment (the deliveries with the completion
/// log), the deliveries completed in a window before it, and the WAL
/// position then (for a soak's samples).
struct tables_sample {
  table_stats events, deliveries;
  int64_t completed = 0;
  int64_t wal_bytes = 0; ///< pg_current_wal_lsn() in bytes
};

/// The row writes of one outbox table so far (pg_stat_user_tables): HOT
/// updates are the ones that wrote no index entry.
struct table_writes {
  int64_t inserted = 0, updated = 0, hot_updated = 0, deleted = 0;
};

/// What the database has written so far: the WAL position in bytes, and
/// the row writes of both tables and of the completion log.
struct write_counters {
  int64_t wal_bytes = 0;
  table_writes events, deliveries, completed;
};

/// later - earlier.
write_counters writes_between(const write_counters& earlier,
                              const write_counters& later);

class progress_repository {
public:
  explicit progress_repository(schema_names names);

  /// True while an event is unrouted or a delivery pending or dispatched.
  /// Asks the partial indexes the relay itself uses, so its cost does not
  /// grow with the final deliveries (a count of them would read them all).
  caf::expected<bool> anything_open(pg_connection& conn);

  /// Deliveries with `status` (reads every one of them).
  caf::expected<int64_t> count_status(pg_connection& conn,
                                      delivery_status status);

  /// The newest event's id, 0 for none.
  caf::expected<int64_t> last_event_id(pg_connection& conn);

  /// Every event after `after_event_id` that has deliveries, in id order.
  caf::expected<std::vector<event_progress>>
  events_after(pg_connection& conn, int64_t after_event_id);

  /// Both tables' sizes and rows, and the deliveries completed from `from`
  /// to before `to` (seconds since the epoch). Reads every row of both
  /// tables (the counts): meant for one sample a few seconds apart at most.
  caf::expected<tables_sample> sample_tables(pg_connection& conn, double from,
                                             double to);

  /// The WAL position and both tables' row writes. The row writes lag
  /// the tables, as sample_tables' tuple counts do: a backend reports
  /// them when it goes idle, at most once a second, and one that went idle
  /// sooner than that reports 10 s later.
  caf::expected<write_counters> sample_writes(pg_connection& conn);

  /// How many deliveries of the events after `after_event_id` a
  /// dispatcher claimed, rather than the router handed over already
  /// dispatched (core/domain/handoff.hpp): each of those is updated once
  /// more.
  caf::expected<int64_t> claimed_after(pg_connection& conn,
                                       int64_t after_event_id);

private:
  std::string open_sql_, count_sql_, last_id_sql_, claimed_sql_, events_sql_,
    sample_sql_, writes_sql_;
};

} // namespace outbox
