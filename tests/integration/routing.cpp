#define CAF_SUITE integration.routing
#include <caf/test/unit_test.hpp>

#include <set>

#include "core/base/errors.hpp"
#include "core/pg/pg_listener.hpp"
#include "core/pg/routing_repository.hpp"
#include "tests/integration/test_services.hpp"

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
  auto unrouted = must_exec(db, "SELECT count(*) FROM " + names.events
                                  + " WHERE routed_at IS NULL");
  CAF_CHECK_EQUAL(unrouted.int64(0, 0), 2);
}

CAF_TEST(routing twice never duplicates a delivery) {
  publish("stock.changed", "{}");
  route_all();
  CAF_CHECK_EQUAL(deliveries(), 2);
  // As if a crashed router had left the event unmarked after inserting.
  must_exec(db, "UPDATE " + names.events + " SET routed_at = NULL");
  auto r = route_all();
  CAF_CHECK_EQUAL(r.events_routed, 1);
  CAF_CHECK_EQUAL(r.deliveries_created, 0);
  CAF_CHECK_EQUAL(deliveries(), 2);
}

CAF_TEST(concurrent routers split the events between them) {
  for (int i = 0; i < 10; ++i)
    publish("order.placed", "{}");
  auto other = connect_db();
  CAF_REQUIRE(!other.begin());
  // The other router holds the first five events locked.
  must_exec(other, "SELECT id FROM " + names.events
                     + " ORDER BY id LIMIT 5 FOR UPDATE");
  auto r = route_all();
  CAF_CHECK_EQUAL(r.events_routed, 5); // skipped, not waited for
  other.rollback();
  CAF_CHECK_EQUAL(route_all().events_routed, 5);
  CAF_CHECK_EQUAL(deliveries(), 10);
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
