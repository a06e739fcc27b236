// The retention store on PostgreSQL. Its connection is the retention
// lock's session: the lock lives as long as the connection, so the store
// knows it lost the lead when it lost the connection, and a node killed
// outright frees it for another node as soon as PostgreSQL sees the
// session end.
#pragma once

#include <optional>
#include <string>

#include "core/domain/retention.hpp"
#include "core/pg/pg_connection.hpp"
#include "core/pg/retention_repository.hpp"
#include "core/pg/retention_ring.hpp"

namespace outbox {

class db_retention_store : public retention_store {
public:
  db_retention_store(std::string url, const schema_names& names);

  caf::expected<bool> lead() override;
  void step_down() override;
  caf::expected<deleted_rows> delete_finished(delivery_status status,
                                              double hours,
                                              int32_t batch) override;
  caf::expected<ring_outcome> turn_ring(double completed_hours,
                                        double longest_hours) override;
  caf::expected<int64_t> delete_quarantined_events(double hours,
                                                   int32_t batch) override;

private:
  /// Runs `f` on the open connection; a broken one is dropped, and the
  /// lead with it.
  template <class T, class F>
  caf::expected<T> run(F f);

  std::string url_;
  std::optional<pg_connection> conn_;
  bool leader_ = false; ///< conn_ holds the retention lock
  retention_repository repo_;
  retention_ring ring_;
};

} // namespace outbox
