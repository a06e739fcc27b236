// The SQL spellings of what a delivery of an ordered key is to its key
// (schema/011_key_ordering.sql), for the operator's statements: one place,
// so that the listing, skip, forget, prune and the status counts agree with
// release_keys. Bare column names of {{deliveries}}: use them where no
// other table of the statement has those columns.
#pragma once

namespace outbox {

/// Blocks its key: failed or expired for good on a route with
/// `onFailure: block`, and no operator skipped it. Nothing behind it goes
/// until `outboxctl skip/retry/forget`; retention never deletes one (the
/// key would be handed on by nobody's decision).
constexpr const char* blocks_key_sql =
  "(ordered AND block_on_failure AND skipped_at IS NULL"
  " AND status IN ('failed', 'expired'))";

/// Holds its key: dispatched, pending and ready (a retry waiting for its
/// delay included), or blocking. The test release_keys makes.
constexpr const char* holds_key_sql =
  "(ordered AND (status = 'dispatched'"
  " OR (status = 'pending' AND available_at IS NOT NULL)"
  " OR (block_on_failure AND skipped_at IS NULL"
  " AND status IN ('failed', 'expired'))))";

/// Waits for its key (parked): only release_keys makes it ready.
constexpr const char* parked_sql =
  "(ordered AND status = 'pending' AND available_at IS NULL)";

/// The predicate of the partial index {{deliveries}}_ordered_idx, spelled
/// as the index spells it, so that a statement with it may read the index.
constexpr const char* ordered_index_sql =
  "ordered AND (status IN ('pending', 'dispatched')"
  " OR (block_on_failure AND status IN ('failed', 'expired')"
  " AND skipped_at IS NULL))";

} // namespace outbox
