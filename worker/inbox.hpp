// The inbox: exactly-once effects for a worker's handlers on the worker's
// own PostgreSQL. Each job runs in one transaction that first records the
// job's identity; the handler's writes and the record commit together, and
// the result goes out only after the commit. A job whose identity is
// already recorded is not run again: its result is sent again as completed.
//
// The identity is the delivery id (with `source`, the outbox database it
// came from, "" while the relay serves one): stable across the relay's
// retries and resends and the broker's redeliveries of one delivery, never
// the dispatch id (new per send). A retry after a handler's failure runs
// again, since its transaction rolled back with the record.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "core/config/config.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

struct inbox_options {
  std::string database_url; ///< the worker's own database
  std::string table = "outbox_inbox";
  /// How long a record is kept: at least as long as a repeat of its
  /// delivery can still arrive (inbox_retention_floor).
  std::chrono::seconds keep{std::chrono::hours{24 * 7}};
  std::string source; ///< the outbox database the jobs come from
  /// How often the worker prunes (once it has seen its queue empty).
  std::chrono::seconds prune_every{60};
};

/// The longest time after a delivery's first send that a repeat of it can
/// still reach a worker of `queue`, by the config's routes to that queue:
/// their retry span (the retry delays plus one delivery timeout per send;
/// with repeatLastDelay the time to live), one more delivery timeout (a
/// message put back in the queue keeps its expiry), and an hour's margin.
/// nullopt when there is no bound (repeatLastDelay without a time to live).
std::optional<std::chrono::seconds> inbox_retention_floor(const config& cfg,
                                                          const std::string& queue);

class inbox {
public:
  /// errc::config_invalid for an empty URL, a bad table name, or a `keep`
  /// below `floor` (naming both). Does not connect yet.
  static caf::expected<inbox> make(inbox_options opts,
                                   std::optional<std::chrono::seconds> floor = {});

  /// Creates the table and its index if missing (idempotent).
  caf::error migrate();

  /// What begin() found.
  enum class start {
    run,        ///< recorded in the open transaction: run the handler
    repeat,     ///< already recorded: do not run it again
    unavailable ///< the database cannot be reached: run nothing now
  };

  /// The source a job of `database` (its message's `outbox-database`) is
  /// recorded under: the options' source and the database's name.
  std::string source_of(const std::string& database) const {
    return opts_.source.empty() ? database : opts_.source + "/" + database;
  }

  /// Opens the job's transaction and records its identity: `source` (""
  /// for the options' own) and the delivery id. With `repeat` and
  /// `unavailable` no transaction is left open.
  start begin(int64_t delivery_id, const std::string& queue, const std::string& job,
              const std::string& source = "");

  /// Opens a transaction that records nothing (a direct job has no
  /// delivery): `run` or `unavailable`.
  start begin_unrecorded();

  /// The open transaction's connection, for the handler.
  pg_connection& connection() { return *conn_; }

  /// Commits the job's transaction; an error means its outcome is unknown
  /// (the job must be run again: it finds its record if it did commit).
  caf::error commit();

  /// Rolls the job's transaction back (the handler failed).
  void rollback();

  /// True once the database answers again (connects if needed).
  bool reachable();

  /// Deletes records older than `keep`, at most `batch` per transaction,
  /// skipping rows another session holds (a handler's): returns how many
  /// it removed.
  caf::expected<int64_t> prune(int64_t batch = 1000);

  const inbox_options& options() const { return opts_; }

private:
  explicit inbox(inbox_options opts) : opts_(std::move(opts)) {}
  caf::error ensure_connected();
  inbox_options opts_;
  std::optional<pg_connection> conn_;
};

} // namespace outbox
