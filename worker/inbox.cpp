#include "worker/inbox.hpp"

#include <algorithm>
#include <numeric>

#include "core/base/errors.hpp"
#include "core/domain/schema_names.hpp"

namespace outbox {

namespace {

constexpr auto margin = std::chrono::hours{1};

} // namespace

std::optional<std::chrono::seconds> inbox_retention_floor(const config& cfg,
                                                          const std::string& queue) {
  std::chrono::seconds longest{0};
  for (auto& r : cfg.routes) {
    if (r.queue != queue)
      continue;
    auto& rules = r.rules;
    int64_t timeout = rules.delivery_timeout_seconds;
    int64_t span = 0;
    if (rules.repeat_last_delay && !rules.retry_delays_seconds.empty()) {
      // Retries go on until the time to live: without one, a repeat may
      // come at any time.
      if (rules.ttl_seconds <= 0)
        return std::nullopt;
      span = rules.ttl_seconds;
    } else {
      auto delays = std::accumulate(rules.retry_delays_seconds.begin(),
                                    rules.retry_delays_seconds.end(), int64_t{0});
      auto sends = static_cast<int64_t>(rules.retry_delays_seconds.size()) + 1;
      span = delays + sends * timeout;
    }
    longest = std::max(longest, std::chrono::seconds{span + timeout});
  }
  return longest + margin;
}

caf::expected<inbox> inbox::make(inbox_options opts,
                                 std::optional<std::chrono::seconds> floor) {
  if (opts.database_url.empty())
    return make_error(errc::config_invalid, "inbox: no database URL");
  if (auto why = check_identifier(opts.table); !why.empty())
    return make_error(errc::config_invalid, "inbox table \"" + opts.table + "\": " + why);
  if (opts.keep.count() <= 0)
    return make_error(errc::config_invalid, "inbox: keep must be positive");
  if (floor && opts.keep < *floor)
    return make_error(errc::config_invalid,
                      "inbox: keep of " + std::to_string(opts.keep.count())
                        + " s is shorter than the " + std::to_string(floor->count())
                        + " s a repeat of a delivery can still arrive in");
  return inbox{std::move(opts)};
}

caf::error inbox::ensure_connected() {
  if (conn_ && conn_->ok())
    return caf::none;
  conn_.reset();
  auto c = pg_connection::connect(opts_.database_url);
  if (!c)
    return std::move(c.error());
  conn_.emplace(std::move(*c));
  return caf::none;
}

bool inbox::reachable() {
  if (ensure_connected())
    return false;
  // A connection kept from before an outage may only now find out.
  if (conn_->exec("inbox_ping", "SELECT 1"))
    return true;
  conn_.reset();
  return !ensure_connected();
}

caf::error inbox::migrate() {
  if (auto err = ensure_connected())
    return err;
  auto t = conn_->quote_identifier(opts_.table);
  auto idx = conn_->quote_identifier(opts_.table + "_handled_at");
  // One statement list runs as one transaction: the advisory lock keeps
  // two workers that start together from racing on CREATE TABLE IF NOT
  // EXISTS (which can fail on the catalog's unique index). The Python
  // inbox takes the same lock.
  return conn_->exec_script(
    "inbox_migrate",
    // (The table's name is a checked identifier: safe inside the literal.)
    "BEGIN; SELECT pg_advisory_xact_lock(hashtext('outbox_inbox:" + opts_.table + "'));"
    "CREATE TABLE IF NOT EXISTS " + t + " ("
    "  source text NOT NULL,"
    "  delivery_id bigint NOT NULL,"
    "  queue text NOT NULL,"
    "  job text NOT NULL,"
    "  handled_at timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (source, delivery_id));"
    "CREATE INDEX IF NOT EXISTS " + idx + " ON " + t + " (handled_at); COMMIT;");
}

inbox::start inbox::begin(int64_t delivery_id, const std::string& queue,
                          const std::string& job, const std::string& source) {
  if (ensure_connected())
    return start::unavailable;
  if (conn_->begin()) {
    conn_.reset();
    return start::unavailable;
  }
  // A copy of this delivery in another worker's open transaction makes
  // this insert wait on its row: after that one commits it finds the
  // conflict (a repeat), after a rollback it records and runs. That is
  // the unique index's behaviour, and it is what keeps two copies from
  // running side by side.
  auto rows = conn_->exec_prepared(
    "inbox_record",
    "INSERT INTO " + conn_->quote_identifier(opts_.table)
      + " (source, delivery_id, queue, job) VALUES ($1, $2, $3, $4)"
        " ON CONFLICT DO NOTHING RETURNING 1",
    {source.empty() ? opts_.source : source, std::to_string(delivery_id), queue,
     job});
  if (!rows) {
    // Whatever broke, the job is not run now: it goes back to the queue.
    conn_->rollback();
    if (!conn_->ok())
      conn_.reset();
    return start::unavailable;
  }
  if (rows->size() == 0) {
    conn_->rollback();
    return start::repeat;
  }
  return start::run;
}

inbox::start inbox::begin_unrecorded() {
  if (ensure_connected())
    return start::unavailable;
  if (conn_->begin()) {
    conn_.reset();
    return start::unavailable;
  }
  return start::run;
}

caf::error inbox::commit() {
  auto err = conn_->commit();
  if (err) {
    conn_->rollback();
    if (!conn_->ok())
      conn_.reset();
  }
  return err;
}

void inbox::rollback() {
  if (conn_) {
    conn_->rollback();
    if (!conn_->ok())
      conn_.reset();
  }
}

caf::expected<int64_t> inbox::prune(int64_t batch) {
  if (auto err = ensure_connected())
    return err;
  auto t = conn_->quote_identifier(opts_.table);
  // Each batch its own short statement (autocommit): rows a handler's
  // transaction holds are skipped, never waited for.
  auto sql = "WITH gone AS (DELETE FROM " + t + " WHERE ctid = ANY(ARRAY("
             "SELECT ctid FROM " + t + " WHERE handled_at < now() - make_interval(secs => $1)"
             " LIMIT $2 FOR UPDATE SKIP LOCKED)) RETURNING 1) SELECT count(*) FROM gone";
  int64_t removed = 0;
  for (;;) {
    auto rows = conn_->exec("inbox_prune", sql,
                            {std::to_string(opts_.keep.count()), std::to_string(batch)});
    if (!rows) {
      if (!conn_->ok())
        conn_.reset();
      return std::move(rows.error());
    }
    auto n = rows->int64(0, 0);
    removed += n;
    if (n < batch)
      return removed;
  }
}

} // namespace outbox
