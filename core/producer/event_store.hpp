// The producer API: adds an event inside the caller's own transaction, so the
// event commits or rolls back together with the business change.
#pragma once

#include <cstdint>

#include <caf/expected.hpp>

#include "core/domain/event.hpp"
#include "core/domain/lifecycle_event.hpp"
#include "core/domain/schema_names.hpp"

struct pg_conn; // libpq's PGconn

namespace outbox {

/// Where events are written. The database store is the default; another
/// (such as a recording fake in an application's tests) can be plugged in.
class event_store {
public:
  event_store() = default;
  event_store(const event_store&) = delete;
  event_store& operator=(const event_store&) = delete;
  virtual ~event_store();

  /// Adds `ev` inside the open transaction on `conn` and returns its id.
  /// Reads no routes and touches no queue. Outside a transaction it writes
  /// nothing and returns errc::not_in_transaction. Any failure inside a
  /// transaction leaves that transaction failed, so that the caller's
  /// rollback (or commit, which then rolls back) drops the business change
  /// and the event together.
  virtual caf::expected<int64_t> add(pg_conn* conn, const event& ev) = 0;
};

/// How db_event_store runs its insert.
enum class insert_statement {
  /// Parsed and planned at every add(): right for any connection, also one
  /// that a pooler in transaction mode hands out per transaction.
  unprepared,
  /// Prepared once per connection (named `ob_` and a hash of its text) and
  /// then run by name: the business transaction pays only the insert
  /// (docs/performance.md measures it). Only on a connection that keeps
  /// its server session: not through a pooler in transaction mode, nor on
  /// one whose owner runs DEALLOCATE ALL or DISCARD ALL, where the next
  /// add() would fail (and fail its transaction). libpq's PQreset is fine.
  prepared,
};

/// Writes events straight into the events table: add() has checked the
/// event by the publish function's rules already (validate_event), so it
/// inserts what that function would insert, without the function call.
class db_event_store : public event_store {
public:
  explicit db_event_store(schema_names names = {},
                          insert_statement how = insert_statement::unprepared);

  /// The insert add() runs ($1 type, $2 payload, $3 key, $4 TTL seconds,
  /// $5 headers, $6 expiry, $7 content type; returns the id).
  static std::string insert_sql(const schema_names& names);
  caf::expected<int64_t> add(pg_conn* conn, const event& ev) override;

  /// Also hands each `stored` event to `f` (e.g. lifecycle_forwarder), once
  /// the insert succeeded in the caller's transaction: a rollback takes the
  /// event back, so it is a step of the transaction, not a promise.
  void observe(lifecycle_observer f) { observer_ = std::move(f); }

private:
  schema_names names_;
  insert_statement how_;
  lifecycle_observer observer_;
  std::string insert_sql_;
};

/// Checks an event before it is written, by the rules of
/// core/domain/event_limits.hpp (which the SQL publish function shares): a type of
/// 1..255 bytes without control characters, valid UTF-8 without NUL
/// everywhere, a payload of at most 8 MiB (JSON of at most 64 levels and
/// numbers a double holds for application/json), a key of 1..1024 bytes
/// without control characters if any, a TTL of 0..100 years, an expiry from
/// 1970 to before 2200, at most 64 headers (names 1..128 bytes, values at
/// most 4096), no header name the wire contract reserves, and a W3C
/// `traceparent` and `tracestate` when given (core/domain/event_headers.hpp:
/// an invalid one is refused, not dropped). Returns errc::invalid_event
/// naming the field and the rule, never quoting the value.
caf::error validate_event(const event& ev);

} // namespace outbox
