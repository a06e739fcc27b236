#include "core/pg/db_retention_store.hpp"

#include "core/pg/db_stores.hpp"

namespace outbox {

db_retention_store::db_retention_store(std::string url, const schema_names& names)
  : url_(std::move(url)), repo_(names), ring_(names) {
}

template <class T, class F>
caf::expected<T> db_retention_store::run(F f) {
  if (!conn_ || !conn_->ok()) {
    conn_.reset();
    leader_ = false; // a new session holds no lock
    auto c = pg_connection::connect(url_);
    if (!c)
      return c.error();
    // The relay's settings: deletes that a crash loses are done again,
    // and the batches go by their indexes whatever the statistics say.
    if (auto err = c->exec_script("relay_session",
                                  relay_session_settings(commit_mode::relay_progress)))
      return err;
    conn_.emplace(std::move(*c));
  }
  caf::expected<T> result = f(*conn_);
  if (!result && !conn_->ok()) {
    conn_.reset();
    leader_ = false;
  }
  return result;
}

caf::expected<bool> db_retention_store::lead() {
  if (leader_ && conn_ && conn_->ok())
    return true;
  auto took = run<bool>([&](pg_connection& c) { return repo_.try_lead(c); });
  if (took)
    leader_ = *took;
  return took;
}

void db_retention_store::step_down() {
  // Closing the session releases its advisory lock with it.
  conn_.reset();
  leader_ = false;
}

caf::expected<deleted_rows>
db_retention_store::delete_finished(delivery_status status, double hours,
                                    int32_t batch) {
  return run<deleted_rows>([&](pg_connection& c) {
    return repo_.delete_finished(c, status, hours * 3600.0, batch,
                                 logged_completions::with_their_partition);
  });
}

caf::expected<ring_outcome>
db_retention_store::turn_ring(double completed_hours, double longest_hours) {
  return run<ring_outcome>([&](pg_connection& c) {
    return ring_.turn(c, completed_hours * 3600.0, longest_hours * 3600.0);
  });
}

caf::expected<int64_t>
db_retention_store::delete_quarantined_events(double hours, int32_t batch) {
  return run<int64_t>([&](pg_connection& c) {
    return repo_.delete_quarantined_events(c, hours * 3600.0, batch);
  });
}

} // namespace outbox
