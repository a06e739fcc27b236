#include "tests/integration/test_services.hpp"

#include <atomic>
#include <cstdlib>
#include <random>
#include <unistd.h>

#include <caf/test/unit_test.hpp>

#include "core/base/errors.hpp"
#include "core/pg/migrations.hpp"

namespace outbox::testing {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

} // namespace

std::string database_url() {
  auto host = env("OUTBOX_TEST_DB_HOST");
  auto port = env("OUTBOX_TEST_DB_PORT");
  if (host.empty() || port.empty())
    CAF_FAIL("OUTBOX_TEST_DB_HOST/PORT are not set: run the tests through "
             "tools/test, which starts the servers");
  auto db = env("OUTBOX_TEST_DB_DATABASE");
  auto user = env("OUTBOX_TEST_DB_USERNAME");
  auto password = env("OUTBOX_TEST_DB_PASSWORD");
  std::string url = "host=" + host + " port=" + port
                    + " dbname=" + (db.empty() ? "postgres" : db)
                    + " user=" + (user.empty() ? "postgres" : user)
                    + " connect_timeout=5";
  if (!password.empty())
    url += " password=" + password;
  return url;
}

std::string amqp_url() {
  auto url = env("OUTBOX_TEST_AMQP_URL");
  if (url.empty())
    CAF_FAIL("OUTBOX_TEST_AMQP_URL is not set: run the tests through "
             "tools/test, which starts the servers");
  return url;
}

std::string unique_prefix() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  return "t" + std::to_string(getpid()) + "_" + std::to_string(++counter) + "_"
         + std::to_string(rd() % 100000) + "_";
}

pg_connection connect_db() {
  auto conn = pg_connection::connect(database_url());
  if (!conn)
    CAF_FAIL("cannot connect to the test database: " << render(conn.error()));
  return std::move(*conn);
}

pg_rows must_exec(pg_connection& conn, const std::string& sql,
                  const pg_params& params) {
  auto rows = conn.exec("test", sql, params);
  if (!rows)
    CAF_FAIL("statement failed: " << render(rows.error()) << "\n" << sql);
  return std::move(*rows);
}

schema_fixture::schema_fixture()
  : names(schema_names{}.with_prefix(unique_prefix())), db(connect_db()) {
  auto ran = migrate(db, names);
  if (!ran)
    CAF_FAIL("migration failed: " << render(ran.error()));
}

schema_fixture::~schema_fixture() {
  if (db.in_transaction() || db.in_failed_transaction())
    db.rollback();
  if (auto err = drop_schema(db, names))
    CAF_FAIL("dropping the test schema failed: " << render(err));
}

std::string all_deliveries(const schema_names& names) {
  return "(SELECT id, event_id, job, queue, status, attempts, created_at,"
         " completed_at, last_error, dispatch_id FROM " + names.deliveries
         + " UNION ALL SELECT id, event_id, job, queue, 'completed', attempts,"
           " created_at, completed_at, NULL, NULL FROM " + names.deliveries
         + "_completed)";
}

int64_t schema_fixture::count_status(const std::string& status) {
  // Completed deliveries are mostly in the completion log (schema/016).
  return must_exec(db, "SELECT (SELECT count(*) FROM " + names.deliveries
                         + " WHERE status = $1) + CASE WHEN $1 = 'completed'"
                           " THEN (SELECT count(*) FROM " + names.deliveries
                         + "_completed) ELSE 0 END",
                   {status})
    .int64(0, 0);
}

std::string schema_fixture::status_of(int64_t id) {
  auto rows = must_exec(db, "SELECT status FROM " + names.deliveries
                              + " WHERE id = $1 UNION ALL SELECT 'completed' FROM "
                              + names.deliveries + "_completed WHERE id = $1",
                        {std::to_string(id)});
  return rows.size() > 0 ? rows.text(0, 0) : "";
}

int64_t schema_fixture::publish(const std::string& type,
                                const std::string& payload,
                                const std::string& key) {
  return must_exec(db, "SELECT " + names.publish_function + "($1, $2, $3)",
                   {type, payload, key.empty() ? pg_param{} : pg_param{key}})
    .int64(0, 0);
}

} // namespace outbox::testing
