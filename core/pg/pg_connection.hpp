// A libpq connection with errors as values. Errors never carry the server's
// message text (it may quote data) except for the outbox's own SQL errors
// (SQLSTATE class "OB"), which are written to be safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

struct pg_conn;
struct pg_result;

namespace outbox {

/// One statement parameter; nullopt is SQL NULL.
using pg_param = std::optional<std::string>;
using pg_params = std::vector<pg_param>;

/// The rows of a statement's result.
class pg_rows {
public:
  explicit pg_rows(pg_result* res);
  int size() const;
  bool is_null(int row, int col) const;
  std::string text(int row, int col) const;
  int64_t int64(int row, int col) const;
  std::optional<std::string> optional_text(int row, int col) const;
  /// The index of the column named `name` (as the statement's AS gives
  /// it), -1 when there is none.
  int column(const char* name) const;

private:
  std::shared_ptr<pg_result> res_;
};

class pg_connection {
public:
  /// Connects; errc::database_unavailable names host, port and database only.
  static caf::expected<pg_connection> connect(const std::string& url);

  /// Adopts a connection the caller owns (the producer API); never closes it.
  /// What exec_prepared prepares is forgotten with the returned object,
  /// unless `remember_prepared`: then it is kept with the connection itself
  /// (libpq's per-connection event data), seen by every later borrow of
  /// it, forgotten when the connection is reset (a new server session) and
  /// freed when it is closed.
  static pg_connection borrow(pg_conn* conn, bool remember_prepared = false);

  /// Runs one statement with text parameters, `name` identifying it in
  /// errors. errc::database_error carries the name and the SQLSTATE.
  caf::expected<pg_rows> exec(const char* name, const std::string& sql,
                              const pg_params& params = {});

  /// Like exec, but as a named prepared statement: parsed and planned once
  /// per connection (on first use), then one round trip per call.
  caf::expected<pg_rows> exec_prepared(const char* name, const std::string& sql,
                                       const pg_params& params = {});

  /// Runs several statements without parameters (migrations, BEGIN, ...).
  caf::error exec_script(const char* name, const std::string& sql);

  /// Starts, commits or rolls back a transaction.
  caf::error begin();
  caf::error commit();
  void rollback();

  /// Returns true while the connection is usable.
  bool ok() const;

  /// Returns true inside an open (not failed) transaction block.
  bool in_transaction() const;

  /// Returns true inside a transaction block that already failed.
  bool in_failed_transaction() const;

  /// Quotes an identifier for SQL text (names come from validated config).
  std::string quote_identifier(const std::string& name) const;

  pg_conn* native() const { return conn_.get(); }

private:
  struct session;
  explicit pg_connection(std::shared_ptr<pg_conn> conn);
  // Takes `res`: its rows, or the statement's error (and clears it).
  caf::expected<pg_rows> rows_or_error(const char* name, pg_result* res);
  std::shared_ptr<pg_conn> conn_;
  std::shared_ptr<session> session_; // what this connection has prepared
};

/// Runs `body` (returning caf::expected<T>) inside BEGIN ... COMMIT; rolls
/// back when the body or the commit fails and returns that error.
template <class T, class Body>
caf::expected<T> in_transaction(pg_connection& conn, Body body) {
  if (auto err = conn.begin())
    return err;
  caf::expected<T> result = body();
  if (!result) {
    conn.rollback();
    return result;
  }
  if (auto err = conn.commit())
    return err;
  return result;
}

/// The SQLSTATE of a failed statement's errc::database_error ("54000"),
/// empty for any other error (a lost connection has none).
std::string sqlstate_of(const caf::error& err);

/// True for a statement that failed on the data of some row rather than on
/// the connection, the server or our SQL: SQLSTATE classes 22 (data
/// exception), 23 (integrity), 54 (program limit, e.g. an index row too
/// big), 0A (not supported, e.g. 'infinity' as a number) and XX001/XX002
/// (a corrupted row or index entry). Only these make a pass look for the
/// row to quarantine; anything else (a lost connection, a deadlock, a
/// syntax error of ours, the server out of resources) fails the pass for
/// the usual backoff, since taking rows out of the way would not help.
bool is_data_error(const caf::error& err);

/// Formats a text[] literal for a parameter: {"a","b\"c"}; nullopt → NULL.
std::string pg_text_array(const std::vector<pg_param>& xs);

/// Formats a bigint[] literal: {1,2,3}.
std::string pg_int_array(const std::vector<int64_t>& xs);

/// Parses a libpq int[] text ("{60,120}") into numbers.
std::vector<int32_t> parse_pg_int_array(const std::string& text);

/// The application_name this process's connections report when neither
/// their URL nor PGAPPNAME sets one. outboxd sets `outboxd <node name>`
/// so that the status view can count each node's connections to each
/// database (status_repository). Empty (the default): none.
void set_fallback_application_name(const std::string& name);

/// libpq waits for a silent database server without a limit unless the URL
/// sets connect_timeout. A program calls this first thing in main (it sets
/// an environment variable: before any thread) to bound every connect at
/// 10 s; an explicit connect_timeout or PGCONNECT_TIMEOUT still wins.
void bound_connect_timeout();

} // namespace outbox
