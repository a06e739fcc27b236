#define CAF_SUITE integration.routing
#include <caf/test/unit_test.hpp>

#include <set>

#include "core/base/errors.hpp"
#include "core/pg/pg_listener.hpp"
#include "core/pg/routing_repository.hpp"
#include "tests/integration/test_services.hpp"
#include "tests/integration/wait_until.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

route make_route(std::string type, std::string job, std::string queue,
                 merge_mode merge = merge_mode::replace) {
  route r;
  r.event_type = std::move(type);
  r.job = std::move(job);
  r.queue = std::move(queue);
  r.rules.retry_delays_seconds = {60, 120};
  r.rules.delivery_timeout_seconds = 30;
  r.rules.merge = merge;
  return r;
}

struct fixture : schema_fixture {
  std::vector<route> routes{
    make_route("stock.changed", "PublishStockJob", "stock.publish"),
    make_route("stock.changed", "IndexJob", "search.index", merge_mode::json_merge),
    make_route("order.placed", "MailJob", "mail", merge_mode::none)};
  routing_repository repo{names, routes};

  routing_result route_all() {
    auto r = repo.route_batch(db, 100);
    if (!r)
      CAF_FAIL("routing failed: " << render(r.error()));
    return *r;
  }

  int64_t deliveries() {
    return must_exec(db, "SELECT count(*) FROM " + names.deliveries).int64(0, 0);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(routing_tests, fixture)

CAF_TEST(each route of an event gets a delivery with the rules copied) {
  auto id = publish("stock.changed", R"({"sku":"A1"})");
  auto r = route_all();
  CAF_CHECK_EQUAL(r.events_routed, 1);
  CAF_CHECK_EQUAL(r.deliveries_created, 2);
  CAF_CHECK_EQUAL(r.per_queue["stock.publish"], 1);
  CAF_CHECK_EQUAL(r.per_queue["search.index"], 1);
  auto row = must_exec(db, "SELECT retry_delays::text, delivery_timeout_seconds, "
                           "status, attempts, merge FROM " + names.deliveries
                             + " WHERE event_id = $1 AND job = 'IndexJob'",
                       {std::to_string(id)});
  CAF_CHECK_EQUAL(row.text(0, 0), "{60,120}");
  CAF_CHECK_EQUAL(row.text(0, 1), "30");
  CAF_CHECK_EQUAL(row.text(0, 2), "pending");
  CAF_CHECK_EQUAL(row.text(0, 3), "0");
  CAF_CHECK_EQUAL(row.text(0, 4), "json-merge");
  CAF_CHECK_EQUAL(route_all().events_routed, 0); // history is not re-routed
}

CAF_TEST(an event type without routes does not block the events behind it) {
  publish("nobody.listens", "{}");
  publish("nobody.listens", "{}");
  publish("order.placed", "{}");
  auto r = route_all();
  CAF_CHECK_EQUAL(r.events_routed, 1);
  CAF_CHECK_EQUAL(r.per_queue["mail"], 1);
  // Set aside, so that they stay unrouted events for status and retention.
  auto aside = must_exec(db, "SELECT count(*) FROM " + names.events
                               + "_unrouted WHERE event_type = 'nobody.listens'");
  CAF_CHECK_EQUAL(aside.int64(0, 0), 2);
  // No event row was written.
  auto written = must_exec(db, "SELECT count(*) FROM " + names.events
                                 + " WHERE routed_at IS NOT NULL");
  CAF_CHECK_EQUAL(written.int64(0, 0), 0);
}

CAF_TEST(a router whose routes include a set aside type routes those first) {
  auto a = publish("nobody.listens", "{}");
  route_all();
  auto b = publish("nobody.listens", "{}");
  auto routes_later = routes;
  routes_later.push_back(make_route("nobody.listens", "LateJob", "late"));
  routing_repository later{names, routes_later};
  auto r = later.route_batch(db, 100);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->per_queue["late"], 1); // the set-aside one, alone first
  r = later.route_batch(db, 100);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->per_queue["late"], 1);
  auto got = must_exec(db, "SELECT string_agg(event_id::text, ',' ORDER BY id) FROM "
                             + names.deliveries + " WHERE queue = 'late'");
  CAF_CHECK_EQUAL(got.text(0, 0), std::to_string(a) + "," + std::to_string(b));
  auto aside = must_exec(db, "SELECT count(*) FROM " + names.events + "_unrouted");
  CAF_CHECK_EQUAL(aside.int64(0, 0), 0);
}

CAF_TEST(a set aside event deleted by hand does not stop routing) {
  auto gone = publish("nobody.listens", "{}");
  route_all();
  must_exec(db, "DELETE FROM " + names.events + " WHERE id = $1",
            {std::to_string(gone)});
  auto routes_later = routes;
  routes_later.push_back(make_route("nobody.listens", "LateJob", "late"));
  routing_repository later{names, routes_later};
  publish("order.placed", "{}");
  auto r = later.route_batch(db, 100);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->per_queue["mail"], 1);
}

CAF_TEST(routing twice never duplicates a delivery) {
  publish("stock.changed", "{}");
  route_all();
  CAF_CHECK_EQUAL(deliveries(), 2);
  // As if a router had stopped before it stored its position: another one
  // starts from the position stored before.
  must_exec(db, "UPDATE " + names.events + "_routing SET position = 0");
  routing_repository other{names, routes};
  auto r = other.route_batch(db, 100);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->events_routed, 0);
  CAF_CHECK_EQUAL(r->deliveries_created, 0);
  CAF_CHECK_EQUAL(deliveries(), 2);
}

// A completed delivery leaves the table (schema/016), so the unique key
// cannot stop a router that takes over from routing its event again: the
// stored cursor does, with the events routed ahead of an open one.
CAF_TEST(a router that takes over routes nothing twice though deliveries left) {
  auto other = connect_db();
  CAF_REQUIRE(!other.begin());
  must_exec(other, "SELECT " + names.publish_function + "('order.placed', '{}')");
  auto ahead = publish("order.placed", "{}");
  CAF_CHECK_EQUAL(route_all().events_routed, 1); // routed ahead of the gap
  auto stored = must_exec(db, "SELECT position, scanned, open_ranges::text FROM "
                                + names.events + "_routing");
  CAF_CHECK_LESS(stored.int64(0, 0), ahead);
  CAF_CHECK_EQUAL(stored.int64(0, 1), ahead);
  CAF_CHECK_EQUAL(stored.text(0, 2), "{" + std::to_string(ahead - 1) + ","
                                       + std::to_string(ahead - 1) + "}");
  // Its delivery completes and leaves the table.
  must_exec(db, "DELETE FROM " + names.deliveries);
  CAF_REQUIRE(!other.commit());
  routing_repository next{names, routes};
  auto r = next.route_batch(db, 100);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->events_routed, 1); // the one that was open, only
  auto got = must_exec(db, "SELECT event_id FROM " + names.deliveries);
  CAF_REQUIRE_EQUAL(got.size(), 1);
  CAF_CHECK_EQUAL(got.int64(0, 0), ahead - 1);
  stored = must_exec(db, "SELECT position, open_ranges IS NULL FROM "
                           + names.events + "_routing");
  CAF_CHECK_EQUAL(stored.int64(0, 0), ahead);
  CAF_CHECK_EQUAL(stored.text(0, 1), "t");
}

CAF_TEST(a malformed stored cursor is a clear error and routes nothing) {
  publish("order.placed", "{}");
  must_exec(db, "UPDATE " + names.events + "_routing SET open_ranges = '{5}'");
  auto r = repo.route_batch(db, 100);
  CAF_REQUIRE(!r);
  CAF_CHECK_NOT_EQUAL(render(r.error()).find("open_ranges"), std::string::npos);
  CAF_CHECK_EQUAL(deliveries(), 0);
  must_exec(db, "UPDATE " + names.events + "_routing SET open_ranges = NULL");
  CAF_CHECK_EQUAL(route_all().events_routed, 1);
}

CAF_TEST(one router routes at a time) {
  for (int i = 0; i < 10; ++i)
    publish("order.placed", "{}");
  auto other = connect_db();
  CAF_REQUIRE(!other.begin());
  // Another router's routing transaction leads.
  must_exec(other, "SELECT pg_advisory_xact_lock(hashtextextended('"
                     + names.events + " routing', 0))");
  auto r = route_all();
  CAF_CHECK_EQUAL(r.events_routed, 0); // not waited for
  CAF_CHECK_EQUAL(deliveries(), 0);
  other.rollback();
  CAF_CHECK_EQUAL(route_all().events_routed, 10);
  CAF_CHECK_EQUAL(deliveries(), 10);
}

CAF_TEST(an open publishing transaction holds the cursor but not the events above it) {
  auto other = connect_db();
  CAF_REQUIRE(!other.begin());
  must_exec(other, "SELECT " + names.publish_function + "('order.placed', '{}')");
  auto after = publish("order.placed", "{}");
  auto r = route_all();
  CAF_CHECK_EQUAL(r.events_routed, 1);
  CAF_CHECK(!r.held_back); // no event waits for the gap
  CAF_CHECK_GREATER(r.due_ms, 0); // but a later pass looks at it
  auto stored = [&] {
    return must_exec(db, "SELECT position FROM " + names.events
                           + "_routing").int64(0, 0);
  };
  CAF_CHECK_LESS(stored(), after);
  CAF_REQUIRE(!other.commit());
  CAF_REQUIRE(wait_until(
    [&] {
      route_all();
      return stored() >= after;
    },
    std::chrono::seconds{10}));
  CAF_CHECK_EQUAL(deliveries(), 2);
  // A rolled-back event leaves a gap that the horizon settles.
  CAF_REQUIRE(!other.begin());
  must_exec(other, "SELECT " + names.publish_function + "('order.placed', '{}')");
  auto last = publish("order.placed", "{}");
  route_all();
  other.rollback();
  CAF_REQUIRE(wait_until(
    [&] {
      route_all();
      return stored() >= last;
    },
    std::chrono::seconds{10}));
  CAF_CHECK_EQUAL(deliveries(), 3);
}

CAF_TEST(a newer event of a key replaces or merges the waiting delivery) {
  publish("stock.changed", R"({"sku":"A1","qty":1,"note":"x"})", "A1");
  route_all();
  publish("stock.changed", R"({"sku":"A1","qty":2,"note":null})", "A1");
  publish("stock.changed", R"({"sku":"B2","qty":7})", "B2");
  auto r = route_all();
  CAF_CHECK_EQUAL(r.deliveries_superseded, 2); // A1 on both routes
  CAF_REQUIRE_EQUAL(r.superseded.size(), 2u);
  int merged_ones = 0;
  for (auto& s : r.superseded) {
    CAF_CHECK(s.superseded_by > s.delivery_id);
    CAF_CHECK(s.event_id > 0);
    merged_ones += s.merged;
  }
  CAF_CHECK_EQUAL(merged_ones, 1); // IndexJob merges, PublishStockJob replaces
  CAF_CHECK_EQUAL(count_status("superseded"), 2);
  CAF_CHECK_EQUAL(count_status("pending"), 4);
  auto merged = must_exec(db, "SELECT payload_override::jsonb::text FROM "
                                + names.deliveries
                                + " WHERE job = 'IndexJob' AND status = 'pending'"
                                  " AND coalesce_key = 'A1'");
  CAF_CHECK_EQUAL(merged.text(0, 0), R"({"qty": 2, "sku": "A1"})");
  auto replaced = must_exec(db, "SELECT payload_override IS NULL FROM "
                                  + names.deliveries
                                  + " WHERE job = 'PublishStockJob' AND "
                                    "status = 'pending' AND coalesce_key = 'A1'");
  CAF_CHECK_EQUAL(replaced.text(0, 0), "t");
  auto by = must_exec(db, "SELECT count(*) FROM " + names.deliveries + " o JOIN "
                            + names.deliveries + " n ON n.id = o.superseded_by"
                            " WHERE o.status = 'superseded' AND n.status = 'pending'");
  CAF_CHECK_EQUAL(by.int64(0, 0), 2);
}

CAF_TEST(merge none keeps both deliveries of a key) {
  publish("order.placed", "{}", "o-1");
  publish("order.placed", "{}", "o-1");
  route_all();
  CAF_CHECK_EQUAL(count_status("pending"), 2);
  CAF_CHECK_EQUAL(count_status("superseded"), 0);
}

CAF_TEST(a routing transaction notifies each queue that got deliveries once) {
  auto listener = pg_listener::listen(database_url(), names.ready_channel());
  CAF_REQUIRE(listener);
  const std::string origin = "0123456789abcdef";
  routing_repository notifying{names, routes,
                               ready_notify{names.ready_channel(), origin}};
  for (int i = 0; i < 3; ++i)
    publish("stock.changed", R"({"sku":"A)" + std::to_string(i) + "\"}");
  publish("order.placed", "{}");
  auto routed = notifying.route_batch(db, 100);
  CAF_REQUIRE(routed);
  CAF_CHECK_EQUAL(routed->deliveries_created, 7);
  std::multiset<std::string> got;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (got.size() < 3 && std::chrono::steady_clock::now() < until) {
    auto ps = listener->wait_payloads(std::chrono::milliseconds{100});
    CAF_REQUIRE(ps);
    got.insert(ps->begin(), ps->end());
  }
  // One per queue, not one per event or delivery.
  CAF_CHECK_EQUAL(got, (std::multiset<std::string>{origin + " mail",
                                                   origin + " search.index",
                                                   origin + " stock.publish"}));
  // A pass that creates no delivery notifies nothing.
  CAF_REQUIRE(notifying.route_batch(db, 100));
  auto more = listener->wait_payloads(std::chrono::milliseconds{300});
  CAF_REQUIRE(more);
  CAF_CHECK(more->empty());
}

CAF_TEST_FIXTURE_SCOPE_END()
