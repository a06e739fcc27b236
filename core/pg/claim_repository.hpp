// The dispatcher's claim over the deliveries table: ready deliveries of one
// queue become dispatched (or expired) in one statement, with the quarantine
// of a row the claim fails on (docs/design.md "Claim and dispatch").
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/delivery_passes.hpp"
#include "core/domain/handoff.hpp"
#include "core/domain/schema_names.hpp"
#include "core/pg/key_release.hpp"

namespace outbox {

class pg_connection;

class claim_repository {
public:
  explicit claim_repository(const schema_names& names);

  /// Claims up to `batch_size` ready pending deliveries of the queue, from
  /// `from` on (FOR UPDATE SKIP LOCKED: concurrent claimers never share a
  /// row), expires those past their time to live, marks the rest
  /// dispatched with a new dispatch id and timeout, and commits before
  /// returning them. It takes only the room `max_in_flight` leaves. When the
  /// claim fails on the data of some row (is_data_error), it claims the
  /// same deliveries one at a time and quarantines those that still fail
  /// (status failed, last_error "quarantined: ..."): the others are sent in
  /// the same pass. When every delivery fails alone too, only the first is
  /// quarantined per pass.
  caf::expected<claim_result> claim_batch(pg_connection& conn,
                                          const claim_request& request);

  /// The job messages of handed deliveries still dispatched with their
  /// handed dispatch id (core/domain/handoff.hpp). Writes nothing.
  caf::expected<claim_result> fetch_handed(pg_connection& conn,
                                           const std::vector<handed_delivery>& ds);

  /// Makes handed deliveries pending again, ready at once, no attempt
  /// counted; returns how many it changed.
  caf::expected<int64_t> release_handed(pg_connection& conn,
                                        const std::vector<handed_delivery>& ds);

private:
  caf::expected<claim_result> claim_one_by_one(pg_connection& conn,
                                               const claim_request& request,
                                               const std::string& batch_state);

  caf::error quarantine(pg_connection& conn, const claim_request& request,
                        const std::string& id, const std::string& state,
                        claim_result& out);

  std::string claim_sql_, claim_one_sql_, candidates_sql_, quarantine_sql_,
    release_handed_sql_, handed_sql_;
  key_release release_;

  // Hands on the keys of the ordered deliveries the claim ended.
  caf::error release_ended(pg_connection& conn, const claim_result& out) const;
};

} // namespace outbox
