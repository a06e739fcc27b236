// The SQL of the operator's verbs (outboxctl failed/expired/retry/forget/
// prune). Every change is conditional on the delivery being final, so an
// operator never disturbs a delivery the relay is working on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/delivery_status.hpp"
#include "core/domain/schema_names.hpp"

namespace outbox {

class pg_connection;

/// One delivery as the listing verbs show it (never the payload).
struct delivery_row {
  int64_t delivery_id = 0, event_id = 0;
  std::string event_type, key, job, queue, last_error;
  delivery_status status = delivery_status::pending;
  int32_t attempts = 0;
  int64_t created_at = 0, finished_at = 0; ///< Unix seconds, 0 = none
};

/// A quarantined event (never the payload or the key, which may be what
/// made it fail: the key's length in bytes instead).
struct quarantined_event {
  int64_t event_id = 0;
  std::string event_type, reason;
  int64_t key_bytes = -1; ///< -1: no key
  int64_t created_at = 0, quarantined_at = 0; ///< Unix seconds
};

/// What a verb did to one id (done_unblocked: forget deleted the delivery
/// that blocked its key, and handed the key on).
enum class admin_verdict { done, done_unblocked, unknown, not_final, wrong_status };

struct prune_result {
  int64_t deliveries = 0, events = 0;
  /// Old enough and of a pruned status, but kept: they block their key.
  int64_t kept_blocking = 0;
};

class admin_repository {
public:
  explicit admin_repository(schema_names names);

  /// Deliveries with `status`, newest first, optionally of one queue.
  caf::expected<std::vector<delivery_row>>
  list(pg_connection& conn, delivery_status status,
       const std::optional<std::string>& queue, int32_t limit);

  /// Sends failed or expired deliveries again: back to pending, attempts
  /// reset, ready now (a new dispatch id comes with the next send). One of
  /// an ordered key waits for its key instead (parked), and the keys are
  /// handed on in the same transaction: it goes at once when nothing else
  /// holds the key, before the later deliveries of its key.
  caf::expected<std::vector<admin_verdict>>
  retry(pg_connection& conn, const std::vector<int64_t>& ids);

  /// The same for every delivery with `status` (one that
  /// is_retryable_by_operator), optionally of one queue; returns how many.
  caf::expected<int64_t> retry_all(pg_connection& conn, delivery_status status,
                                   const std::optional<std::string>& queue);

  /// Quarantined events, newest first (schema/009_quarantine.sql).
  caf::expected<std::vector<quarantined_event>>
  list_quarantined_events(pg_connection& conn, int32_t limit);

  /// Deliveries the claim quarantined (failed, last_error "quarantined:
  /// ..."), newest first.
  caf::expected<std::vector<delivery_row>>
  list_quarantined_deliveries(pg_connection& conn, int32_t limit);

  /// Deletes quarantined events (with any delivery they have); an id that
  /// is not a quarantined event is `unknown`.
  caf::expected<std::vector<admin_verdict>>
  discard(pg_connection& conn, const std::vector<int64_t>& ids);

  /// Deletes one final delivery, and its event when no delivery is left.
  /// One that blocked its key is skipped so: the key goes on.
  caf::expected<admin_verdict> forget(pg_connection& conn, int64_t id);

  /// Deletes final deliveries (of `statuses`) that finished more than
  /// `hours` ago, then events left without deliveries, `batch` rows per
  /// transaction so no lock is held for long. Never one that blocks its key
  /// (core/pg/key_hold_sql.hpp): deleting it would hand the key on without
  /// an operator. The others hold no key: deleting them changes no key.
  caf::expected<prune_result> prune(pg_connection& conn, int64_t hours,
                                    const std::vector<delivery_status>& statuses,
                                    int32_t batch = 1000);

private:
  // forget of a delivery that completed into the completion log.
  caf::expected<admin_verdict> forget_logged(pg_connection& conn, int64_t id);

  schema_names names_;
};

} // namespace outbox
