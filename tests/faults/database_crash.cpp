#define CAF_SUITE faults.database_crash
#include <caf/test/unit_test.hpp>

#include "tests/faults/fault_cluster.hpp"
#include "tests/faults/private_services.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// A delivery timeout far longer than the scenario: the sends the crash
// finds out must still be handed ones (a timed-out send moves to the
// logged partition and survives the crash anyway).
struct fixture : private_services, fault_cluster {
  fixture() : fault_cluster("[1, 1]", 300) {
  }

  int64_t scalar(const std::string& sql) {
    return must_exec(db, sql).int64(0, 0);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(database_crash_faults, fixture)

// Handed deliveries are rows of an unlogged partition (schema/021): a crash
// of PostgreSQL empties it, and the router must make those sends again.
CAF_TEST(a crash of PostgreSQL with handed sends out loses none of them) {
  // A router hands sends over only to a dispatcher of its own node.
  router_roles = "router,sweeper,dispatcher,results";
  start_status_node();
  start_router_node();
  // No workers yet: what the dispatcher publishes stays out, unanswered.
  // The router hands sends over only once its node's dispatcher says it
  // can publish, and only within the in-flight limit: one event first,
  // until it is out (the dispatcher's pass ran), then events until some
  // are handed, however slow the machine.
  publish_in_background(1, 0);
  wait_published();
  CAF_REQUIRE(wait_until([&] { return count_status("dispatched") > 0; }));
  keep_publishing(20);
  auto handed_rows = "SELECT count(*) FROM " + names.deliveries + "_handed";
  CAF_REQUIRE(wait_until([&] { return scalar(handed_rows) > 0; }));
  stop_publishing();
  // Every event routed and the cursor stored.
  CAF_REQUIRE(wait_until([&] {
    return scalar("SELECT coalesce(scanned, position) FROM " + names.events
                  + "_routing WHERE name = 'cursor'")
           >= last_event_id();
  }));
  CAF_REQUIRE(scalar("SELECT count(*) FROM " + names.events
                     + "_routing WHERE handed_floor IS NOT NULL")
              == 1);
  auto handed = scalar(handed_rows);
  // Everything sent so far may be sent once more after the crash: the
  // handed sends, and claims whose asynchronous commit the crash may undo.
  auto out = count_status("dispatched");
  CAF_MESSAGE(handed << " handed sends of " << out << " out");
  crash_database();
  start_database();
  db = connect_db();
  // The fault is in effect: the crash emptied the partition.
  CAF_REQUIRE_EQUAL(scalar(handed_rows), 0);
  start_workers();
  // Within the case's 120 s: a send left lost shows as open in the verdict.
  auto v = settle(std::chrono::seconds{60});
  check("PostgreSQL crashed with handed sends out", v, out);
  CAF_CHECK_GREATER_OR_EQUAL(lines_with("router", "event=handed_deliveries_recovered"),
                             1);
}

CAF_TEST_FIXTURE_SCOPE_END()
