// What integration tests share: the real servers from the OUTBOX_TEST_*
// variables, and a fixture that migrates its own uniquely named tables and
// drops them afterwards.
#pragma once

#include <string>

#include "core/config/config.hpp"
#include "core/domain/schema_names.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox::testing {

/// The libpq URL of the test database; aborts the test with a clear message
/// when the OUTBOX_TEST_DB_* variables are missing (run tools/test).
std::string database_url();

/// The AMQP URL of the test broker (OUTBOX_TEST_AMQP_URL).
std::string amqp_url();

/// A prefix no other run uses: "t<pid>_<counter>_<random>_".
std::string unique_prefix();

/// Connects to the test database or fails the test.
pg_connection connect_db();

/// Runs a statement or fails the test; returns its rows.
pg_rows must_exec(pg_connection& conn, const std::string& sql,
                  const pg_params& params = {});

/// Every delivery, those in the completion log (schema/016) as completed
/// ones, as a subquery for FROM: id, event_id, job, queue, status,
/// attempts, created_at, completed_at, last_error, dispatch_id (the last
/// two NULL for the log's).
std::string all_deliveries(const schema_names& names);

/// Migrates uniquely named tables on construction, drops them after.
struct schema_fixture {
  schema_fixture();
  ~schema_fixture();

  /// Counts deliveries with this status (completed: with the completion
  /// log's).
  int64_t count_status(const std::string& status);

  /// The status of delivery `id` ("completed" in the completion log), ""
  /// for none.
  std::string status_of(int64_t id);

  /// Inserts an event through the publish function, in its own transaction.
  int64_t publish(const std::string& type, const std::string& payload,
                  const std::string& key = "");

  schema_names names;
  pg_connection db;
};

} // namespace outbox::testing
