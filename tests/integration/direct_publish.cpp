#define CAF_SUITE integration.direct_publish
#include <caf/test/unit_test.hpp>

#include <atomic>
#include <thread>

#include "core/producer/producer.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "worker/worker.hpp"

using namespace outbox;
using namespace outbox::testing;
using namespace std::chrono_literals;

namespace {

struct fixture : cluster_fixture {
  std::string metrics_q = queue("metrics");
  std::string orders_q = queue("orders");

  config direct_config() {
    auto c = make_config({make_route("metrics.cpu", "RecordCpu", metrics_q, {1}),
                          make_route("order.placed", "Confirm", orders_q, {1})});
    c.direct_patterns = {"metrics.*", "presence.?"};
    return c;
  }

  int64_t stored_events() {
    return must_exec(db, "SELECT count(*) FROM " + names.events).int64(0, 0);
  }

  /// The next message on `q`, or fails the test.
  incoming_message next_on(const std::string& q) {
    auto c = amqp_client::connect(amqp_url(), "direct test reader");
    CAF_REQUIRE(c);
    CAF_REQUIRE(!(*c)->declare_queue(q));
    CAF_REQUIRE(!(*c)->consume(q, 10));
    auto m = (*c)->next_message(5s);
    CAF_REQUIRE(m && *m);
    CAF_REQUIRE(!(*c)->ack((**m).delivery_tag));
    return std::move(**m);
  }

  event make(const std::string& type, const std::string& payload) {
    event ev;
    ev.event_type = type;
    ev.payload = payload;
    return ev;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(direct_publish_tests, fixture)

CAF_TEST(an excepted event type goes straight to its queue and is not stored) {
  producer p{direct_config()};
  must_exec(db, "BEGIN");
  auto direct = p.add(db.native(), make(R"(metrics.cpu)", R"({"load":0.5})"));
  CAF_REQUIRE(direct);
  CAF_CHECK_EQUAL(*direct, 0);
  auto stored = p.add(db.native(), make("order.placed", R"({"order":1})"));
  CAF_REQUIRE(stored);
  CAF_CHECK_GREATER(*stored, 0);
  must_exec(db, "ROLLBACK"); // takes the order back, not the metric
  CAF_CHECK_EQUAL(stored_events(), 0);
  auto m = next_on(metrics_q);
  CAF_CHECK_EQUAL(m.type, "RecordCpu");
  CAF_CHECK_EQUAL(m.message_id.size(), 36u); // a UUID
  CAF_CHECK_EQUAL(m.expiration, "");         // no time to live
  auto job = parse_job_message(m.body);
  CAF_REQUIRE(job);
  CAF_CHECK(job->direct);
  CAF_CHECK_EQUAL(job->job, "RecordCpu");
  CAF_CHECK_EQUAL(job->event_type, "metrics.cpu");
  CAF_CHECK_EQUAL(job->payload_json, R"({"load":0.5})");
  CAF_CHECK_EQUAL(job->last_attempt, true);
  CAF_CHECK_EQUAL(job->delivery_id, 0);
}

CAF_TEST(disabled outbox publishes every event directly without a connection) {
  auto cfg = parse_config(R"({"routes": {"order.placed": [
      {"job": "Confirm", "queue": ")" + orders_q + R"(", "ttlSeconds": 30}]}})",
                          [](const char* name) -> std::string {
                            return std::string{name} == "OUTBOX_ENABLED" ? "false"
                                   : std::string{name} == "OUTBOX_AMQP_URL"
                                     ? amqp_url()
                                     : "";
                          });
  if (!cfg)
    CAF_FAIL(render(cfg.error()));
  CAF_CHECK(!cfg->enabled);
  producer p{*cfg};
  auto ev = make("order.placed", R"({"order":2})");
  ev.ttl_seconds = 10; // earlier than the route's 30 s: it wins
  auto r = p.add(nullptr, ev);
  CAF_REQUIRE(r);
  auto m = next_on(orders_q);
  CAF_CHECK_EQUAL(m.type, "Confirm");
  auto ttl = std::stoll(m.expiration);
  CAF_CHECK_GREATER(ttl, 9000);
  CAF_CHECK_LESS_OR_EQUAL(ttl, 10000);
}

// RabbitMQ refuses an expiration above ten years and closes the channel;
// a time to live longer than that is sent as the longest it takes.
CAF_TEST(a time to live beyond ten years is sent as the longest RabbitMQ takes) {
  producer p{direct_config()};
  auto ev = make("metrics.cpu", R"({"load":0.5})");
  ev.ttl_seconds = 2'000'000'000; // 63 years
  auto r = p.add(nullptr, ev);
  if (!r)
    CAF_FAIL(render(r.error()));
  CAF_CHECK_EQUAL(next_on(metrics_q).expiration, "315360000000");
}

CAF_TEST(a broker failure reaches the caller) {
  auto cfg = direct_config();
  cfg.amqp_url = "amqp://guest:guest@127.0.0.1:1/";
  producer down{cfg};
  auto r = down.add(nullptr, make("metrics.cpu", "{}"));
  CAF_REQUIRE(!r);
  CAF_CHECK(r.error() == errc::broker_unavailable);
  // A queue that exists with other arguments refuses the declaration.
  auto c = amqp_client::connect(amqp_url(), "direct test setup");
  CAF_REQUIRE(c);
  auto odd = queue("odd");
  queue_options full;
  full.max_length = 0;
  full.reject_overflow = true;
  CAF_REQUIRE(!(*c)->declare_queue(odd, full));
  auto cfg2 = direct_config();
  cfg2.routes.push_back(make_route("metrics.disk", "RecordDisk", odd, {1}));
  producer p{cfg2};
  auto refused = p.add(nullptr, make("metrics.disk", "{}"));
  CAF_REQUIRE(!refused);
  // ... and the producer recovers for the next event.
  auto ok = p.add(nullptr, make("metrics.cpu", "{}"));
  CAF_CHECK(ok);
  next_on(metrics_q);
}

CAF_TEST(an invalid direct event is refused before anything is sent) {
  producer p{direct_config()};
  auto r = p.add(nullptr, make("metrics.cpu", "{not json"));
  CAF_REQUIRE(!r);
  CAF_CHECK(r.error() == errc::invalid_event);
  auto c = amqp_client::connect(amqp_url(), "direct test reader");
  CAF_REQUIRE(c);
  CAF_REQUIRE(!(*c)->declare_queue(metrics_q));
  CAF_REQUIRE(!(*c)->consume(metrics_q, 10));
  auto m = (*c)->next_message(500ms);
  CAF_REQUIRE(m);
  CAF_CHECK(!*m);
}

// Direct publish never reaches the SQL function: validate_event alone
// holds the limits there (core/domain/event_limits.hpp).
CAF_TEST(a direct event beyond the publish limits is refused before anything is sent) {
  producer p{direct_config()};
  std::vector<event> bad(6, make("metrics.cpu", R"({"load":1})"));
  bad[0].key = std::string(8000, 'k');
  bad[1].payload = R"({"load":1e400})";
  bad[2].payload = R"({"load":1.8e308})"; // RapidJSON reads inf
  bad[3].payload = std::string(100000, '[') + std::string(100000, ']');
  bad[4].ttl_seconds = 10'000'000'000;
  bad[5].payload = R"({"load":"\u0000"})";
  for (auto& ev : bad) {
    auto r = p.add(nullptr, ev);
    CAF_REQUIRE(!r);
    CAF_CHECK(r.error() == errc::invalid_event);
  }
  auto c = amqp_client::connect(amqp_url(), "direct test reader");
  CAF_REQUIRE(c);
  CAF_REQUIRE(!(*c)->declare_queue(metrics_q));
  CAF_REQUIRE(!(*c)->consume(metrics_q, 10));
  auto m = (*c)->next_message(500ms);
  CAF_REQUIRE(m);
  CAF_CHECK(!*m);
}

CAF_TEST(the worker library runs a direct job and sends no result) {
  producer p{direct_config()};
  std::atomic<int> runs{0};
  outbox::worker w{worker_options{amqp_url(), metrics_q, 5}};
  w.handle("RecordCpu", [&](const job_context&) { ++runs; });
  std::thread t{[&] { w.run(); }};
  CAF_REQUIRE(p.add(nullptr, make("metrics.cpu", R"({"load":1})")));
  CAF_REQUIRE(p.add(nullptr, make("metrics.cpu", R"({"load":2})")));
  CAF_CHECK(wait_until([&] { return runs == 2; }, 10s));
  w.stop();
  t.join();
  CAF_CHECK_EQUAL(w.counters().direct, 2);
  CAF_CHECK_EQUAL(w.counters().completed, 0);
  // Nothing waits on the results queue.
  auto c = amqp_client::connect(amqp_url(), "direct test reader");
  CAF_REQUIRE(c);
  CAF_REQUIRE(!(*c)->declare_queue(results_queue(metrics_q)));
  CAF_REQUIRE(!(*c)->consume(results_queue(metrics_q), 10));
  auto m = (*c)->next_message(500ms);
  CAF_REQUIRE(m);
  CAF_CHECK(!*m);
}

CAF_TEST_FIXTURE_SCOPE_END()
