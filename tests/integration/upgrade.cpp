// Upgrade in place: a database of the schema the relay had before the lean
// write path (012: the NOTIFY and inserting-lock triggers, the routed mark,
// completions updated in the table), holding deliveries in every open
// state and some final ones, is migrated to the newest schema; a relay of
// this version then finishes every delivery, sends none twice, and routes
// no event twice.
#define CAF_SUITE integration.upgrade
#include <caf/test/unit_test.hpp>

#include <map>

#include "core/pg/admin_repository.hpp"
#include "core/pg/migrations.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/test_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// The last version before the write path changed (013: no NOTIFY).
constexpr int old_version = 12;

struct fixture : cluster_fixture {
  std::string q = queue("plain");
  std::string oq = queue("ordered");

  fixture() {
    // The schema_fixture migrated to the newest version: start over at the
    // old one, as a database the older relay used.
    if (auto err = drop_schema(db, names))
      CAF_FAIL("drop failed: " << render(err));
    auto ran = migrate(db, names, old_version);
    if (!ran)
      CAF_FAIL("old migration failed: " << render(ran.error()));
  }

  /// An event the old router routed (its routed mark set).
  int64_t routed_event(const std::string& type, const std::string& key = "") {
    auto id = must_exec(db, "SELECT " + names.publish_function
                              + "($1, '{}', NULLIF($2, ''))",
                        {type, key})
                .int64(0, 0);
    must_exec(db, "UPDATE " + names.events + " SET routed_at = now() WHERE id = $1",
              {std::to_string(id)});
    return id;
  }

  /// A delivery as the old relay left it; returns its id.
  int64_t delivery(int64_t event, const std::string& queue_name,
                   const std::string& status, const std::string& more_columns = "",
                   const std::string& more_values = "") {
    return must_exec(db, "INSERT INTO " + names.deliveries
                           + " (event_id, job, queue, retry_delays,"
                             " delivery_timeout_seconds, status" + more_columns
                           + ") VALUES ($1, 'J', $2, '{1}', 2, $3" + more_values
                           + ") RETURNING id",
                     {std::to_string(event), queue_name, status})
      .int64(0, 0);
  }
};

answer complete(const job_seen&, int) {
  return answer::completed;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(upgrade_tests, fixture)

CAF_TEST(a database of the old schema is migrated and every delivery finishes) {
  // Pending and ready.
  auto pending = delivery(routed_event("plain"), q, "pending");
  // Sent by the old relay, which stopped before a result came: no job
  // message is left anywhere, so only its delivery timeout sends it again.
  auto dispatched = delivery(routed_event("plain"), q, "dispatched",
                             ", dispatch_id, dispatched_at, delivery_timeout_at",
                             ", gen_random_uuid(), now(), now() + interval '2 s'");
  // An ordered key: its holder ready, the next one parked behind it.
  auto holder = delivery(routed_event("ordered", "k"), oq, "pending",
                         ", coalesce_key, ordered", ", 'k', true");
  auto parked = delivery(routed_event("ordered", "k"), oq, "pending",
                         ", coalesce_key, ordered, available_at",
                         ", 'k', true, NULL");
  // Final ones: a failed delivery an operator retries after the upgrade,
  // and one completed in place, as the old result handler did.
  auto failed = delivery(routed_event("plain"), q, "failed",
                         ", attempts, failed_at, finished_at, last_error",
                         ", 2, now(), now(), 'worker says no'");
  auto done = delivery(routed_event("plain"), q, "completed",
                       ", completed_at, finished_at", ", now(), now()");
  // Published, not routed yet.
  auto unrouted = must_exec(db, "SELECT " + names.publish_function + "('plain', '{}')")
                    .int64(0, 0);
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.deliveries
                                  + " WHERE status = 'completed'")
                    .int64(0, 0),
                  1);

  auto ran = migrate(db, names);
  CAF_REQUIRE(ran);
  CAF_CHECK_EQUAL(*ran, static_cast<int>(migrations().size()) - old_version);
  CAF_CHECK(!check_schema(db, names));

  auto ordered_route = make_route("ordered", "J", oq, {1}, 2);
  ordered_route.rules.ordering = key_ordering::key;
  running_node node{make_config({make_route("plain", "J", q, {1}, 2), ordered_route})};
  test_worker plain_worker{amqp_url(), q, complete};
  test_worker ordered_worker{amqp_url(), oq, complete};
  admin_repository admin{names};
  auto retried = admin.retry(db, {failed});
  CAF_REQUIRE(retried);
  CAF_CHECK(retried->at(0) == admin_verdict::done);

  // Every delivery completes: the five open or retried ones and the new
  // one of the unrouted event, next to the one completed before.
  CAF_REQUIRE(wait_until([&] {
    return count_status("completed") == 7 && open_deliveries() == 0;
  }, std::chrono::seconds{60}));
  CAF_CHECK_EQUAL(count_status("failed"), 0);
  // One delivery per event: nothing routed twice, the unrouted one routed.
  auto per_event = must_exec(db, "SELECT event_id, count(*) FROM "
                                   + all_deliveries(names) + " d GROUP BY event_id");
  CAF_CHECK_EQUAL(per_event.size(), 7);
  for (int i = 0; i < per_event.size(); ++i)
    CAF_CHECK_EQUAL(per_event.int64(i, 1), 1);
  auto of_unrouted = must_exec(db, "SELECT count(*) FROM " + all_deliveries(names)
                                     + " d WHERE event_id = $1",
                               {std::to_string(unrouted)});
  CAF_CHECK_EQUAL(of_unrouted.int64(0, 0), 1);
  // Each reached its worker once (the dispatched one too: the old send
  // left no message), the completed one never.
  for (auto id : {pending, dispatched, failed})
    CAF_CHECK_EQUAL(plain_worker.seen_for(id).size(), 1u);
  CAF_CHECK_EQUAL(plain_worker.seen_for(done).size(), 0u);
  auto ordered_seen = ordered_worker.seen();
  CAF_REQUIRE_EQUAL(ordered_seen.size(), 2u);
  CAF_CHECK_EQUAL(ordered_seen[0].delivery_id, holder); // the key's order held
  CAF_CHECK_EQUAL(ordered_seen[1].delivery_id, parked);
  // New events after the upgrade take the new path: their completion moves
  // them to the completion log.
  auto fresh = must_exec(db, "SELECT " + names.publish_function + "('plain', '{}')")
                 .int64(0, 0);
  CAF_REQUIRE(wait_until([&] {
    return must_exec(db, "SELECT count(*) FROM " + names.deliveries
                           + "_completed WHERE event_id = $1",
                     {std::to_string(fresh)})
             .int64(0, 0)
           == 1;
  }, std::chrono::seconds{30}));
}

CAF_TEST_FIXTURE_SCOPE_END()
