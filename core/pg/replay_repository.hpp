// An operator's replay (outboxctl replay): new deliveries of one job and
// queue for retained events, made with the route's current rules by the
// routing statement itself (routing_repository::route_events), marked
// replayed, in bounded batches that never hold routing up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/route.hpp"
#include "core/domain/schema_names.hpp"
#include "core/pg/routing_repository.hpp"

namespace outbox {

class pg_connection;

/// Which events to replay: those of the routes' types (and, when given,
/// only `event_type`), not quarantined, and either created in [since,
/// until) (timestamptz text; until may be absent) or named by id.
struct replay_selection {
  std::optional<std::string> since, until;
  std::vector<int64_t> event_ids;
  std::optional<std::string> event_type;
};

struct replay_counts {
  int64_t events = 0;  ///< retained events that match
  int64_t created = 0; ///< deliveries made (0 on a dry run)
  /// Matching events that still have a delivery of the job and queue in the
  /// table (open, failed, expired, superseded, or an ordered completion):
  /// none is made for them (`outboxctl retry` sends a failed one again).
  int64_t skipped = 0;
};

class replay_repository {
public:
  /// `routes`: the config's routes of the job and queue being replayed.
  replay_repository(const schema_names& names, std::vector<route> routes,
                    std::optional<ready_notify> notify);

  /// Replays the selection in transactions of at most `batch` events, in
  /// event order; with `dry_run`, only counts.
  caf::expected<replay_counts> replay(pg_connection& conn,
                                      const replay_selection& what,
                                      bool dry_run, int32_t batch = 1000);

private:
  std::vector<route> routes_;
  routing_repository routing_;
  std::string by_time_sql_, by_id_sql_;
};

} // namespace outbox
