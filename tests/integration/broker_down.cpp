#define CAF_SUITE integration.broker_down
#include <caf/test/unit_test.hpp>

#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/test_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// A config whose broker cannot be reached: what the cluster does while
// RabbitMQ is down (dispatchers claim nothing, the rest goes on).
config unreachable_broker(config c) {
  c.amqp_url = "amqp://guest:guest@127.0.0.1:1/";
  return c;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(broker_down_tests, cluster_fixture)

CAF_TEST(events of one key coalesce while the broker is down) {
  auto qa = queue("replace");
  auto qb = queue("merge");
  auto ra = make_route("stock", "Publish", qa, {1});
  auto rb = make_route("stock", "Index", qb, {1});
  rb.rules.merge = merge_mode::json_merge;
  auto cfg = make_config({ra, rb});
  {
    running_node down{unreachable_broker(cfg)};
    publish("stock", R"({"sku":"A","qty":1})", "A");
    publish("stock", R"({"sku":"A","price":5})", "A");
    publish("stock", R"({"sku":"A","qty":3})", "A");
    CAF_REQUIRE(wait_until([&] { return count_status("superseded") == 4; }));
    CAF_CHECK_EQUAL(count_status("pending"), 2); // one per route
    CAF_CHECK_EQUAL(count_status("dispatched"), 0);
  }
  running_node up{cfg};
  test_worker wa{amqp_url(), qa, [](const job_seen&, int) { return answer::completed; }};
  test_worker wb{amqp_url(), qb, [](const job_seen&, int) { return answer::completed; }};
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 2; }));
  auto replaced = wa.seen();
  auto merged = wb.seen();
  CAF_REQUIRE_EQUAL(replaced.size(), 1u);
  CAF_REQUIRE_EQUAL(merged.size(), 1u);
  CAF_CHECK_EQUAL(replaced[0].payload_json, R"({"sku":"A","qty":3})"); // newest wins
  auto& m = merged[0].payload_json; // RFC 7396 merge of all three
  CAF_CHECK_NOT_EQUAL(m.find(R"("qty":3)"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(m.find(R"("price":5)"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(m.find(R"("sku":"A")"), std::string::npos);
}

CAF_TEST(deliveries expire while the broker is down and are never sent) {
  auto q = queue("ttl");
  auto route_ttl = make_route("short", "Short", q, {1});
  route_ttl.rules.ttl_seconds = 1;
  auto cfg = make_config({route_ttl, make_route("own", "Own", q, {1})});
  {
    running_node down{unreachable_broker(cfg)};
    publish("short", "{}");
    // The event's own time to live: 1 s, on a route without one.
    must_exec(db, "SELECT " + names.publish_function + "('own', '{}', NULL, 1)");
    CAF_REQUIRE(wait_until([&] { return count_status("expired") == 2; }));
  }
  running_node up{cfg};
  test_worker w{amqp_url(), q, [](const job_seen&, int) { return answer::completed; }};
  // Never sent, proven by progress rather than by waiting: once the new
  // node's dispatcher has passed, a marker delivery published then is
  // claimed (by available_at, id) and sent behind anything older that a
  // claim would wrongly take, on the same queue.
  CAF_REQUIRE(wait_until([&] {
    return up.metrics_of("dispatcher " + q).passes >= 1;
  }));
  publish("own", "{}"); // the marker
  CAF_REQUIRE(wait_until([&] { return !w.seen().empty(); }));
  auto seen = w.seen();
  CAF_CHECK_EQUAL(seen.size(), 1u); // an expired delivery is never sent
  // CAF's check keeps a reference to its arguments: no temporaries.
  auto own = deliveries_of("Own");
  CAF_REQUIRE(!own.empty());
  CAF_CHECK_EQUAL(seen.at(0).delivery_id, own.back().first);
  CAF_CHECK_EQUAL(count_status("expired"), 2); // and stays in the table
}

CAF_TEST_FIXTURE_SCOPE_END()
