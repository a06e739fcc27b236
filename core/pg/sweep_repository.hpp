// The sweeper's pass over the deliveries table: sends whose result did not
// come in time, and pending deliveries whose time to live ran out
// (docs/design.md "Timeouts and expiry").
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

class sweep_repository {
public:
  explicit sweep_repository(const schema_names& names);

  /// Treats up to `batch_size` dispatched deliveries past their timeout as
  /// failed attempts (retry or fail) and expires pending ones past their
  /// time to live, in one transaction; then hands the keys of ordered
  /// ones that ended on (key_release), and now and then looks for keys
  /// whose hand-over was lost. A timed-out send of an ordered key is kept
  /// as a late send that holds its key (schema/020_late_sends.sql); late
  /// sends whose time came are ended afterwards, in a statement of their
  /// own. The request's holds spare the deliveries of
  /// queues whose result handlers stalled (core/domain/relay_stalls.hpp).
  caf::expected<sweep_result> sweep(pg_connection& conn, const sweep_request& req);

private:
  // Each adds the ordered deliveries it changed to `ordered`.
  caf::error time_out(pg_connection& conn, const sweep_request& req,
                      sweep_result& out, std::vector<int64_t>& ordered);
  caf::error expire(pg_connection& conn, int32_t batch_size, sweep_result& out,
                    std::vector<int64_t>& ordered);

  std::string timed_out_sql_, expire_sql_, record_late_sql_, expire_late_sql_,
    update_sql_;
  key_release release_;
  int64_t sweeps_ = 0;
};

} // namespace outbox
