// The stores on PostgreSQL: each owns one connection, opened on first use
// and opened again after it broke, so a database restart costs the failed
// pass and nothing else (the actor backs off and tries again).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/domain/stores.hpp"
#include "core/pg/claim_repository.hpp"
#include "core/pg/pg_connection.hpp"
#include "core/pg/result_repository.hpp"
#include "core/pg/routing_repository.hpp"
#include "core/pg/status_repository.hpp"
#include "core/pg/sweep_repository.hpp"

namespace outbox {

/// How a store's transactions commit.
///
/// `relay_progress`: without waiting for the WAL flush (synchronous_commit =
/// off). Routing, claims and sweeps only record the relay's own progress: a
/// crash that loses the last few makes the relay redo that work (route
/// again, which ON CONFLICT makes a no-op; send again, which at-least-once
/// delivery allows; sweep again), never lose an event.
///
/// `before_ack`: waiting for the flush, as the application's commits do.
/// The result handler acks a worker's results once they are applied; a
/// completion lost after its ack would leave the delivery dispatched until
/// the timeout sweep retried it, or, on its last attempt, failed it.
enum class commit_mode { relay_progress, before_ack };

/// Plans that go by index only (see db_stores.cpp for why).
extern const char* const index_only_plan_settings;

/// The SQL a relay store runs once per connection: its commit mode and
/// index_only_plan_settings. Public so that a test can check the plans and
/// the commit mode.
std::string relay_session_settings(commit_mode mode);

/// The routing store's settings: relay_session_settings(relay_progress)
/// and generic plans for every statement (see db_stores.cpp for why). A
/// routing transaction that coalesces or releases keys sets the choice back
/// to PostgreSQL's own for its rest (routing_detail::plans_by_values_sql).
std::string routing_session_settings();

/// A connection that reconnects lazily and runs `settings` (SQL) once on
/// each new connection.
class pg_session {
public:
  explicit pg_session(std::string url, std::string settings = {})
    : url_(std::move(url)), settings_(std::move(settings)) {}

  /// Runs `f(pg_connection&)` (returning caf::expected<T>) on a live
  /// connection; drops the connection when it broke so the next call
  /// reconnects.
  template <class T, class F>
  caf::expected<T> run(F f) {
    if (!conn_ || !conn_->ok()) {
      auto c = pg_connection::connect(url_);
      if (!c)
        return c.error();
      if (!settings_.empty())
        if (auto err = c->exec_script("relay_session", settings_))
          return err;
      conn_.emplace(std::move(*c));
    }
    caf::expected<T> result = f(*conn_);
    if (!result && !conn_->ok())
      conn_.reset();
    return result;
  }

  /// As run(), but when `f` failed on a connection kept from an earlier
  /// call that turned out broken (the server restarted meanwhile), it runs
  /// once more on a new one. Only for work that may run twice: a write
  /// whose COMMIT was lost with the connection may have happened.
  template <class T, class F>
  caf::expected<T> run_reconnecting(F f) {
    bool kept = conn_.has_value();
    auto result = run<T>(f);
    if (!result && kept && !conn_)
      return run<T>(f);
    return result;
  }

private:
  std::string url_;
  std::string settings_;
  std::optional<pg_connection> conn_;
};

class db_routing_store : public routing_store {
public:
  db_routing_store(std::string url, const schema_names& names,
                   const std::vector<route>& routes,
                   std::optional<ready_notify> notify = std::nullopt);
  caf::expected<routing_result>
  route_batch(int32_t batch_size,
              const std::vector<handoff_queue>& handoff) override;

private:
  pg_session session_;
  routing_repository repo_;
};

class db_delivery_store : public delivery_store {
public:
  /// The result handler's store commits `before_ack`; the dispatcher's and
  /// the sweeper's `relay_progress`.
  db_delivery_store(std::string url, const schema_names& names, commit_mode mode);
  caf::expected<claim_result> claim_batch(const claim_request& request) override;
  caf::expected<apply_result>
  apply_results(const std::vector<send_result>& rs) override;
  caf::expected<sweep_result> sweep(const sweep_request& request) override;
  caf::expected<claim_result>
  fetch_handed(const std::vector<handed_delivery>& ds) override;
  caf::expected<int64_t>
  release_handed(const std::vector<handed_delivery>& ds) override;

private:
  pg_session session_;
  claim_repository claims_;
  result_repository results_;
  sweep_repository sweeps_;
};

class db_status_store : public status_store {
public:
  /// A read that takes longer than `read_timeout` (a lock it waits for, a
  /// table that reads slowly) ends as an error of this database.
  db_status_store(std::string url, const schema_names& names,
                  std::chrono::milliseconds read_timeout = std::chrono::seconds{10});
  caf::expected<status_counts> read() override;

private:
  pg_session session_;
  status_repository repo_;
  std::chrono::milliseconds read_timeout_;
};

} // namespace outbox
