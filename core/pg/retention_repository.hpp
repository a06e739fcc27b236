// The SQL of retention: the lock that makes one node at a time the one
// that deletes, and the bounded deletes of final deliveries (and of the
// events they leave without deliveries) that both the retention actor and
// `outboxctl prune` run (docs/operations.md "Retention").
#pragma once

#include <cstdint>
#include <string>

#include <caf/expected.hpp>

#include "core/domain/delivery_status.hpp"
#include "core/domain/retention.hpp"
#include "core/domain/schema_names.hpp"
#include "core/pg/retention_ring.hpp"

namespace outbox {

class pg_connection;

/// The retention lock's two keys as SQL, $1 the deliveries table's name:
/// a session-level advisory lock per outbox schema, so that outboxes with
/// other table names in one database each have a leader of their own. The
/// two-key form never meets the migrations' one-key lock.
extern const char* const retention_lock_keys;

/// Whether delete_finished of `completed` deletes the completion log's
/// rows one by one too (`outboxctl prune`, with any window), or leaves
/// them to their partition of the ring (retention, core/pg/retention_ring.hpp).
enum class logged_completions { row_by_row, with_their_partition };

class retention_repository {
public:
  explicit retention_repository(schema_names names);

  /// Takes the retention lock for this session unless another session
  /// holds it; true when this session holds it now. Held until the
  /// session ends.
  caf::expected<bool> try_lead(pg_connection& conn);

  /// Deletes up to `batch` deliveries of the final `status` whose
  /// finished_at is more than `seconds` ago (never an open delivery, never
  /// a row another transaction has locked), and in the same statement the
  /// events this leaves without any delivery. One statement, in autocommit:
  /// a short transaction. For `completed` with `row_by_row`, a second one
  /// does the same in the completion log (schema/016); the counts are
  /// both's.
  caf::expected<deleted_rows> delete_finished(pg_connection& conn,
                                              delivery_status status,
                                              double seconds, int32_t batch,
                                              logged_completions logged);

  /// Deletes up to `batch` quarantined events (which have no deliveries)
  /// quarantined more than `seconds` ago.
  caf::expected<int64_t> delete_quarantined_events(pg_connection& conn,
                                                   double seconds,
                                                   int32_t batch);

private:
  schema_names names_;
  std::string finished_sql_, quarantined_sql_;
  std::string logged_sql_[ring_partitions]; ///< per partition of the ring
};

} // namespace outbox
