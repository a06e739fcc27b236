#define CAF_SUITE integration.status
#include <caf/test/unit_test.hpp>

#include <chrono>

#include "core/pg/db_stores.hpp"
#include "core/pg/status_repository.hpp"
#include "tests/integration/delivery_fixture.hpp"
#include "tests/integration/wait_until.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct status_fixture : delivery_fixture {
  // Until the terminated backend has left pg_stat_activity (at most 10 s).
  bool wait_until_gone(const std::string& name) {
    return wait_until([&] {
      return must_exec(db, "SELECT 1 FROM pg_stat_activity WHERE "
                           "application_name = $1", {name})
               .size()
             == 0;
    }, std::chrono::seconds{10});
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(status_tests, status_fixture)

CAF_TEST(empty tables give zeros for every status) {
  status_repository st{names};
  auto s = st.read(db);
  if (!s)
    CAF_FAIL("status read failed: " << render(s.error()));
  CAF_CHECK_EQUAL(s->unrouted_events, 0);
  CAF_CHECK_EQUAL(s->oldest_unrouted_age_seconds, 0.0);
  CAF_CHECK_EQUAL(s->per_status.size(), 6u);
  for (auto& [status, n] : s->per_status)
    CAF_CHECK_EQUAL(n, 0);
  CAF_CHECK(s->per_queue.empty());
}

CAF_TEST(counts are given per status and per queue) {
  make_deliveries(3, {60}, "qa");
  make_deliveries(2, {60}, "qb");
  publish("no.route", "{}");
  claim("qa", 1);
  status_repository st{names};
  auto s = st.read(db);
  if (!s)
    CAF_FAIL("status read failed: " << render(s.error()));
  CAF_CHECK_EQUAL(s->unrouted_events, 1);
  CAF_CHECK_EQUAL(s->per_status["pending"], 4);
  CAF_CHECK_EQUAL(s->per_status["dispatched"], 1);
  CAF_CHECK_EQUAL(s->per_status["completed"], 0);
  CAF_CHECK_EQUAL(s->per_queue["qa"].per_status["pending"], 2);
  CAF_CHECK_EQUAL(s->per_queue["qa"].per_status["dispatched"], 1);
  CAF_CHECK_EQUAL(s->per_queue["qb"].per_status["pending"], 2);
  CAF_CHECK_EQUAL(s->per_queue["qb"].per_status["failed"], 0);
  CAF_CHECK(s->oldest_open_age_seconds >= 0.0);
}

CAF_TEST(the first read after the connection was lost answers from a new one) {
  // Its own application_name tells this store's backend from every other.
  auto name = "outbox_status_" + names.events;
  db_status_store store{database_url() + " application_name=" + name, names};
  CAF_REQUIRE(store.read());
  // What a server restart does to a kept connection.
  auto killed = must_exec(db, "SELECT pg_terminate_backend(pid) FROM "
                              "pg_stat_activity WHERE application_name = $1",
                          {name});
  CAF_REQUIRE_EQUAL(killed.size(), 1);
  CAF_REQUIRE(wait_until_gone(name));
  auto s = store.read();
  if (!s)
    CAF_FAIL("status read failed: " << render(s.error()));
  CAF_CHECK_EQUAL(s->per_status.size(), 6u);
}

CAF_TEST(a read that waits for a lock ends as an error and the next one answers) {
  db_status_store store{database_url(), names, std::chrono::milliseconds{300}};
  CAF_REQUIRE(store.read());
  // A migration's lock, say: the counts cannot be read while it is held.
  auto locker = connect_db();
  must_exec(locker, "BEGIN");
  must_exec(locker, "LOCK TABLE " + names.deliveries + " IN ACCESS EXCLUSIVE MODE");
  auto blocked = store.read();
  CAF_REQUIRE(!blocked);
  CAF_MESSAGE("while locked: " << render(blocked.error()));
  CAF_CHECK(blocked.error() == errc::database_error);
  CAF_CHECK(render(blocked.error()).find("not read within 300 ms")
            != std::string::npos);
  must_exec(locker, "ROLLBACK");
  auto s = store.read();
  if (!s)
    CAF_FAIL("status read failed: " << render(s.error()));
  CAF_CHECK_EQUAL(s->per_status.size(), 6u);
}

CAF_TEST_FIXTURE_SCOPE_END()
