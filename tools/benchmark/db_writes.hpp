// What a phase of the benchmark made PostgreSQL write, per event: WAL
// bytes and the row writes of both outbox tables, HOT updates apart (an
// update that wrote no index entry). The relay's database cost is mostly
// these writes, so the benchmark counts them instead of inferring them.
#pragma once

#include <cstdint>
#include <functional>

#include <caf/expected.hpp>

#include "core/json/field.hpp"
#include "core/pg/progress_repository.hpp"

namespace outbox::bench {

struct write_figures {
  /// false: the statistics had not caught up when the bench gave up
  /// waiting, so the row writes are short of the truth.
  bool settled = true;
  double wal_bytes = 0;
  double events_inserted = 0, events_updated = 0, events_hot = 0;
  double deliveries_inserted = 0, deliveries_updated = 0, deliveries_hot = 0;
  double deliveries_deleted = 0;
  /// Rows appended to the completion log (schema/016).
  double completions_logged = 0;
  /// Inserted already dispatched by the router (core/domain/handoff.hpp).
  double deliveries_handed = 0;
};

template <class Inspector>
bool inspect(Inspector& f, write_figures& x) {
  return f(field("settled", x.settled), field("walBytes", x.wal_bytes),
           field("eventsInserted", x.events_inserted),
           field("eventsUpdated", x.events_updated),
           field("eventsHotUpdated", x.events_hot),
           field("deliveriesInserted", x.deliveries_inserted),
           field("deliveriesUpdated", x.deliveries_updated),
           field("deliveriesHotUpdated", x.deliveries_hot),
           field("deliveriesDeleted", x.deliveries_deleted),
           field("completionsLogged", x.completions_logged),
           field("deliveriesHanded", x.deliveries_handed));
}

/// `w` divided by `events`.
write_figures per_event(const write_counters& w, int64_t events, bool settled);

/// The counters, and whether they caught up.
struct settled_counters {
  write_counters counters;
  bool settled = false;
};

/// The counters once the statistics have caught up with `caught_up`: each
/// backend reports its row writes when it goes idle, but at most once a
/// second, and one that went idle sooner reports 10 s later (longer when
/// the statistics are busy). So this reads every 200 ms until `caught_up`
/// holds, for 25 s at most (then the last read, not settled). The WAL
/// position is the first read's.
caf::expected<settled_counters>
settled_writes(pg_connection& conn, progress_repository& progress,
               const std::function<bool(const write_counters&)>& caught_up);

} // namespace outbox::bench
