// The SQL of the dispatch, result and timeout passes over the deliveries
// table. Every pass is one transaction of a few set-based statements, never
// a statement per row.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/delivery.hpp"
#include "core/domain/schema_names.hpp"

namespace outbox {

class pg_connection;
class pg_rows;

struct claim_result {
  std::vector<job_to_send> jobs;
  int64_t expired = 0; ///< past their time to live: expired, never sent
  /// Made `failed` because the claim failed on them alone (quarantine).
  int64_t quarantined = 0;
  std::vector<delivery_transition> transitions; ///< those expiries and failures
  /// Seconds until the earliest pending delivery not claimed now becomes
  /// ready (a retry, say); nullopt when there is none.
  std::optional<double> next_ready_seconds;
  /// How many the queue's in-flight limit let this claim take (before it
  /// took them); nullopt when the claim did not say.
  std::optional<int64_t> room;
  /// The in-flight limit, not the batch size or the ready rows, cut this
  /// claim short: more may be waiting for results to free room.
  bool at_limit = false;
};

struct apply_result {
  std::vector<result_verdict> verdicts; ///< one per input, same order
  int64_t completed = 0, retried = 0, failed = 0, expired = 0;
  std::vector<delivery_transition> transitions;
};

struct sweep_result {
  int64_t timed_out = 0; ///< dispatched past delivery_timeout_at
  int64_t retried = 0, failed = 0;
  int64_t expired = 0;   ///< timed-out or pending ones past their TTL
  std::vector<delivery_transition> transitions;
};

class delivery_repository {
public:
  explicit delivery_repository(const schema_names& names);

  /// Claims up to `batch_size` ready pending deliveries of `queue`
  /// (FOR UPDATE SKIP LOCKED: concurrent claimers never share a row),
  /// expires those past their time to live, marks the rest dispatched with a
  /// new dispatch id and timeout, and commits before returning them. When
  /// the claim fails on the data of some row (is_data_error), it claims the
  /// same deliveries one at a time and quarantines those that still fail
  /// (status failed, last_error "quarantined: ..."): the others are sent in
  /// the same pass. When every delivery fails alone too, only the first is
  /// quarantined per pass.
  ///
  /// At most `max_in_flight` deliveries of the queue are dispatched at once
  /// (counted in the database at the claim; concurrent claims may exceed it
  /// by up to a batch each): the claim takes only the room left.
  caf::expected<claim_result> claim_batch(pg_connection& conn,
                                          const std::string& queue,
                                          int32_t batch_size,
                                          int32_t max_in_flight = no_limit);

  /// A max_in_flight that never binds (above any possible count of rows a
  /// test or tool makes).
  static constexpr int32_t no_limit = INT32_MAX;

  /// Applies results atomically. Each changes its delivery only if it is
  /// still dispatched under the same dispatch id and job; `retry` follows
  /// the delivery's own retry rules and time to live. A batch of
  /// completions only (the common case) takes one statement; any other
  /// batch locks its deliveries, decides, and updates in one transaction.
  caf::expected<apply_result> apply_results(pg_connection& conn,
                                            const std::vector<send_result>& rs);

  /// Treats up to `batch_size` dispatched deliveries past their timeout as
  /// failed attempts (retry or fail) and expires pending ones past their
  /// time to live.
  caf::expected<sweep_result> sweep(pg_connection& conn, int32_t batch_size);

private:
  /// Where a run of full batches of a queue left off. A claim walks the
  /// ready index from the start, past an entry for every delivery claimed
  /// before it until a vacuum removes them: over a long drain that walk
  /// grew to cost more than the claim. So while batches come back full, a
  /// claim starts after the last key the previous one took. A delivery
  /// that becomes ready behind that key meanwhile (a claim of another
  /// dispatcher that rolled back, a routing transaction that commits late)
  /// waits until a claim is not full: then the next starts from the
  /// beginning again. Nothing is skipped for longer than a run of full
  /// batches.
  struct claim_cursor {
    std::string available_at = "-infinity";
    int64_t id = 0;
  };

  // Reads a claim's rows into `out`; returns the deliveries it took.
  static int64_t read_claim(const pg_rows& rows, claim_result& out,
                            claim_cursor& after);

  caf::expected<claim_result> claim_one_by_one(pg_connection& conn,
                                               const std::string& queue,
                                               int32_t batch_size,
                                               int32_t max_in_flight,
                                               const std::string& batch_state);

  caf::expected<apply_result>
  apply_completions(pg_connection& conn, const std::vector<send_result>& rs);

  std::map<std::string, claim_cursor> cursors_; ///< per queue

  std::string claim_sql_, claim_one_sql_, candidates_sql_, quarantine_sql_,
    complete_sql_, lock_sql_, update_sql_, timed_out_sql_,
    expire_sql_;
};

} // namespace outbox
