#define CAF_SUITE integration.event_store
#include <caf/test/unit_test.hpp>

#include <poll.h>

#include <libpq-fe.h>

#include "core/base/errors.hpp"
#include "core/domain/json_serializer.hpp"
#include "core/producer/event_store.hpp"
#include "tests/integration/test_services.hpp"
#include "tests/sample_events.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct fixture : schema_fixture {
  db_event_store store{names};

  int64_t events() {
    return must_exec(db, "SELECT count(*) FROM " + names.events).int64(0, 0);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(event_store_tests, fixture)

CAF_TEST(an event is refused outside a transaction and nothing is written) {
  auto ev = make_event(stock_changed{"A1", 3});
  CAF_REQUIRE(ev);
  auto id = store.add(db.native(), *ev);
  CAF_REQUIRE(!id);
  CAF_CHECK(id.error() == errc::not_in_transaction);
  CAF_CHECK_EQUAL(events(), 0);
}

CAF_TEST(an event commits and rolls back with the business transaction) {
  must_exec(db, "CREATE TABLE " + names.events + "_biz (n int)");
  auto ev = make_event(stock_changed{"A1", 3});
  CAF_REQUIRE(ev);
  CAF_REQUIRE(!db.begin());
  must_exec(db, "INSERT INTO " + names.events + "_biz VALUES (1)");
  auto id = store.add(db.native(), *ev);
  CAF_REQUIRE(id);
  db.rollback();
  CAF_CHECK_EQUAL(events(), 0);
  CAF_REQUIRE(!db.begin());
  must_exec(db, "INSERT INTO " + names.events + "_biz VALUES (2)");
  auto id2 = store.add(db.native(), *ev);
  CAF_REQUIRE(id2);
  CAF_REQUIRE(!db.commit());
  auto row = must_exec(db, "SELECT event_type, payload, routed_at IS NULL FROM "
                             + names.events + " WHERE id = $1",
                       {std::to_string(*id2)});
  CAF_CHECK_EQUAL(row.text(0, 0), "stock.changed");
  CAF_CHECK_EQUAL(row.text(0, 1), R"({"sku":"A1","available":3})");
  CAF_CHECK_EQUAL(row.text(0, 2), "t");
  must_exec(db, "DROP TABLE " + names.events + "_biz");
}

CAF_TEST(a rejected event leaves the transaction failed) {
  must_exec(db, "CREATE TABLE " + names.events + "_biz (n int)");
  CAF_REQUIRE(!db.begin());
  must_exec(db, "INSERT INTO " + names.events + "_biz VALUES (1)");
  event bad;
  bad.event_type = "stock.changed";
  bad.payload = "{not json";
  auto id = store.add(db.native(), bad);
  CAF_REQUIRE(!id);
  CAF_CHECK(id.error() == errc::invalid_event);
  CAF_CHECK(db.in_failed_transaction());
  // Committing a failed transaction rolls it back: the business row is gone.
  db.exec_script("commit", "COMMIT");
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.events + "_biz")
                    .int64(0, 0),
                  0);
  CAF_CHECK_EQUAL(events(), 0);
  must_exec(db, "DROP TABLE " + names.events + "_biz");
}

CAF_TEST(key ttl and headers are stored) {
  event ev;
  ev.event_type = "stock.changed";
  ev.payload = "{}";
  ev.key = "sku-A1";
  ev.ttl_seconds = 60;
  ev.headers = {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}};
  CAF_REQUIRE(!db.begin());
  auto id = store.add(db.native(), ev);
  CAF_REQUIRE(id);
  CAF_REQUIRE(!db.commit());
  auto row = must_exec(db, "SELECT key, headers->>'traceparent', "
                           "expires_at BETWEEN now() + interval '50 s' AND now() + interval '70 s' "
                           "FROM " + names.events);
  CAF_CHECK_EQUAL(row.text(0, 0), "sku-A1");
  CAF_CHECK_EQUAL(row.text(0, 1), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  CAF_CHECK_EQUAL(row.text(0, 2), "t");
}

CAF_TEST(an expiry and a ttl together keep the earlier) {
  event ev;
  ev.event_type = "stock.changed";
  ev.payload = "{}";
  ev.ttl_seconds = 3600;
  ev.expires_at = std::chrono::system_clock::now() + std::chrono::seconds{60};
  CAF_REQUIRE(!db.begin());
  CAF_REQUIRE(store.add(db.native(), ev));
  ev.ttl_seconds = 60;
  ev.expires_at = std::chrono::system_clock::now() + std::chrono::hours{1};
  CAF_REQUIRE(store.add(db.native(), ev));
  ev.ttl_seconds = 0; // never expires by the TTL: the expiry alone
  CAF_REQUIRE(store.add(db.native(), ev));
  CAF_REQUIRE(!db.commit());
  auto rows = must_exec(db, "SELECT expires_at < now() + interval '2 min' FROM "
                              + names.events + " ORDER BY id");
  CAF_REQUIRE_EQUAL(rows.size(), 3);
  CAF_CHECK_EQUAL(rows.text(0, 0), "t");
  CAF_CHECK_EQUAL(rows.text(1, 0), "t");
  CAF_CHECK_EQUAL(rows.text(2, 0), "f");
}

// How many statements the session of `conn` has prepared.
int64_t prepared_statements(pg_connection& conn) {
  return must_exec(conn, "SELECT count(*) FROM pg_prepared_statements").int64(0, 0);
}

CAF_TEST(a prepared store prepares its insert once per connection) {
  auto own = pg_connection::connect(database_url());
  CAF_REQUIRE(own);
  auto* native = own->native();
  db_event_store fast{names, insert_statement::prepared};
  db_event_store also{names, insert_statement::prepared};
  auto ev = make_event(stock_changed{"A1", 3});
  CAF_REQUIRE(ev);
  auto add_one = [&](db_event_store& s) {
    CAF_REQUIRE(!own->begin());
    auto id = s.add(native, *ev);
    CAF_REQUIRE(id);
    CAF_REQUIRE(!own->commit());
  };
  add_one(fast);
  add_one(fast);
  add_one(also); // another store of the same tables: the same statement
  CAF_CHECK_EQUAL(prepared_statements(*own), 1);
  // A reset opens a new server session, which has prepared nothing.
  PQreset(native);
  CAF_REQUIRE_EQUAL(PQstatus(native), CONNECTION_OK);
  CAF_CHECK_EQUAL(prepared_statements(*own), 0);
  add_one(fast);
  CAF_CHECK_EQUAL(prepared_statements(*own), 1);
  CAF_CHECK_EQUAL(events(), 4);
  // The unprepared store (the default) leaves the session as it was.
  must_exec(*own, "DEALLOCATE ALL");
  add_one(store);
  CAF_CHECK_EQUAL(prepared_statements(*own), 0);
  CAF_CHECK_EQUAL(events(), 5);
}

CAF_TEST(the sql function checks its arguments with clear errors) {
  struct {
    std::string args;
    const char* expected;
  } cases[] = {
    {"'', '{}'", "event_type must be a non-empty text"},
    {"'t', NULL", "payload must not be NULL"},
    {"'t', '{nope'", "payload is not valid JSON"},
    {"'t', '{}', ''", "key must be NULL or a non-empty text"},
    {"'t', '{}', NULL, -5", "ttl_seconds must be >= 0"},
    {"'t', '{}', NULL, NULL, '[1]'", "headers must be a JSON object"},
  };
  for (auto& c : cases) {
    auto r = db.exec("publish", "SELECT " + names.publish_function + "(" + c.args + ")");
    CAF_REQUIRE(!r);
    if (render(r.error()).find(c.expected) == std::string::npos)
      CAF_FAIL("expected «" << c.expected << "» in «" << render(r.error()) << "»");
  }
  CAF_CHECK_EQUAL(events(), 0);
}

CAF_TEST(a publishing transaction sends no notification) {
  // A pending notification would serialise this commit with every other
  // notifying commit of the cluster (event_probe.hpp says why).
  auto listener = connect_db();
  must_exec(listener, "LISTEN \"" + names.events + "\"");
  CAF_REQUIRE(!db.begin());
  must_exec(db, "SELECT " + names.publish_function + "('a', '{}')");
  CAF_REQUIRE(!db.commit());
  // No trigger on the events table notifies, and nothing was queued.
  auto triggers = must_exec(db, "SELECT count(*) FROM pg_trigger t JOIN pg_proc p "
                                "ON p.oid = t.tgfoid WHERE t.tgrelid = $1::regclass "
                                "AND p.prosrc ILIKE '%notify%'",
                            {names.events});
  CAF_CHECK_EQUAL(triggers.int64(0, 0), 0);
  // A bounded window, on purpose: a notification comes within
  // milliseconds of its commit or not at all.
  pollfd pfd{PQsocket(listener.native()), POLLIN, 0};
  poll(&pfd, 1, 500);
  PQconsumeInput(listener.native());
  PGnotify* m = PQnotifies(listener.native());
  CAF_CHECK(m == nullptr);
  if (m)
    PQfreemem(m);
}

CAF_TEST_FIXTURE_SCOPE_END()
