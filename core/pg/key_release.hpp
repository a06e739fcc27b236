// Hands the key of an ordered route on to its next delivery
// (schema/011_key_ordering.sql): every pass that ends a delivery's hold on
// its key calls it, in the same transaction, for the deliveries it changed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/schema_names.hpp"

namespace outbox {

class pg_connection;

class key_release {
public:
  explicit key_release(const schema_names& names);

  /// Makes the next parked delivery of the keys of `ids` (those of
  /// ordered routes; others are ignored) ready where nothing holds the key
  /// any more. Returns how many it made ready; no round trip without ids.
  caf::expected<int64_t> release(pg_connection& conn,
                                 const std::vector<int64_t>& ids) const;

  /// The backstop for a hand-over lost between two statements (a crash
  /// between a completion and its release, a row changed by hand): the
  /// same for up to `limit` keys whose next delivery waits while nothing
  /// holds the key. Reads every waiting delivery: run it seldom.
  caf::expected<int64_t> release_stuck(pg_connection& conn, int32_t limit) const;

private:
  std::string release_sql_;
  std::string stuck_sql_;
};

} // namespace outbox
