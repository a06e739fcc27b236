// How the router learns that events committed, without a NOTIFY in the
// producer's transaction: PostgreSQL serialises the commits of every
// transaction with a pending notification on one cluster-wide lock held
// through the WAL flush, so a NOTIFY trigger cut the application's own
// write rate (docs/performance.md "Business commits"). Instead the relay
// asks, over a connection of its own, for a signature of the newest
// events (a hash of their ids, read from the primary key): it changes when
// an event commits.
#pragma once

#include <string>

#include <caf/expected.hpp>

#include "core/domain/schema_names.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

class event_probe {
public:
  /// Connects, bounding how long a probe may wait (on a lock, on a server
  /// that went away); the statement is prepared on its first read().
  static caf::expected<event_probe> connect(const std::string& url,
                                            const schema_names& names);

  /// The signature of the newest events (an md5 of their ids);
  /// errc::database_unavailable once the connection broke.
  caf::expected<std::string> read();

  /// The statement read() runs (for the query-plan test).
  static std::string sql(const schema_names& names);

  /// The probe's own session (for the query-plan test: the plan it keeps).
  pg_connection& connection() { return conn_; }

private:
  event_probe(pg_connection conn, std::string sql)
    : conn_(std::move(conn)), sql_(std::move(sql)) {}
  pg_connection conn_;
  std::string sql_;
};

} // namespace outbox
