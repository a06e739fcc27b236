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

/// Writes events through the schema's publish function.
class db_event_store : public event_store {
public:
  explicit db_event_store(schema_names names = {});
  caf::expected<int64_t> add(pg_conn* conn, const event& ev) override;

  /// Also hands each `stored` event to `f` (e.g. lifecycle_forwarder), once
  /// the insert succeeded in the caller's transaction: a rollback takes the
  /// event back, so it is a step of the transaction, not a promise.
  void observe(lifecycle_observer f) { observer_ = std::move(f); }

private:
  schema_names names_;
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
