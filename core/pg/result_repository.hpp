// The result handler's writes over the deliveries table: workers' (and the
// dispatcher's own) results of sends, applied only while they still match
// the send (docs/design.md "Results").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/delivery_passes.hpp"
#include "core/domain/schema_names.hpp"
#include "core/pg/key_release.hpp"

namespace outbox {

class pg_connection;

class result_repository {
public:
  explicit result_repository(const schema_names& names);

  /// Applies results atomically. Each changes its delivery only if it is
  /// still dispatched under the same dispatch id and job; `retry` follows
  /// the delivery's own retry rules and time to live. A batch of
  /// completions only (the common case) takes one statement, which moves
  /// the completed deliveries to the completion log; any other
  /// batch locks its deliveries, decides, and updates in one transaction,
  /// and hands the keys of ordered deliveries on (key_release); completions
  /// of ordered deliveries take one more statement, which does both. A
  /// result that applies to nothing ends its send's late hold, if it has
  /// one (schema/020_late_sends.sql), in one more statement.
  caf::expected<apply_result> apply_results(pg_connection& conn,
                                            const std::vector<send_result>& rs);

private:
  caf::expected<apply_result>
  apply_decided(pg_connection& conn, const std::vector<send_result>& rs);

  caf::expected<apply_result>
  apply_completions(pg_connection& conn, const std::vector<send_result>& rs);

  // Completes the results `which` of `rs` (of ordered deliveries) and
  // hands their keys on, in one statement; merged into `out`.
  caf::error apply_ordered(pg_connection& conn,
                           const std::vector<send_result>& rs,
                           const std::vector<size_t>& which, apply_result& out);

  // A result that found no delivery is stale if its delivery is in the
  // completion log (it came late or twice), unknown otherwise.
  caf::error settle_logged(pg_connection& conn,
                           const std::vector<send_result>& rs, apply_result& out);

  // A result that applied to nothing may be the late result of a timed-out
  // send of an ordered key: ends that late send and hands its key on.
  caf::error end_late(pg_connection& conn, const std::vector<send_result>& rs,
                      apply_result& out);

  std::string complete_sql_, logged_sql_, lock_sql_, update_sql_,
    complete_ordered_sql_, end_late_sql_;
  key_release release_;
};

} // namespace outbox
