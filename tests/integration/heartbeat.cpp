// Idle connections: every AMQP user of the outbox asks for a 1 s heartbeat
// here (the URL's ?heartbeat=1), sits idle for several intervals, and must
// then work at once, without a delivery paying an attempt for it. The idle
// periods are the subject of these tests, not a way to wait for something.
#define CAF_SUITE integration.heartbeat
#include <caf/test/unit_test.hpp>

#include <thread>

#include "core/amqp/amqp_session.hpp"
#include "core/producer/producer.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/running_worker.hpp"
#include "worker/worker.hpp"

using namespace outbox;
using namespace outbox::testing;
using namespace std::chrono_literals;

namespace {

// The broker closes a connection after two silent intervals: 5 s of
// silence is well past that at 1 s.
constexpr auto idle_period = 5s;

std::string short_heartbeat_url() {
  auto url = amqp_url();
  return url + (url.find('?') == std::string::npos ? "?" : "&") + "heartbeat=1";
}

outgoing_message message_to(const std::string& q) {
  outgoing_message m;
  m.routing_key = q;
  m.body = "{}";
  m.message_id = "1";
  m.correlation_id = "c";
  m.type = "J";
  return m;
}

std::unique_ptr<amqp_client> must_connect(const std::string& url) {
  auto c = amqp_client::connect(url, "outbox heartbeat test");
  if (!c)
    CAF_FAIL("cannot connect: " << render(c.error()));
  return std::move(*c);
}

struct fixture : cluster_fixture {
  /// max(attempts) over this test's deliveries (failed attempts counted).
  int64_t max_attempts() {
    return must_exec(db, "SELECT COALESCE(max(attempts), 0) FROM " + all_deliveries(names)
                           + " d")
      .int64(0, 0);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(heartbeat_tests, fixture)

CAF_TEST(the url sets the heartbeat the client proposes) {
  auto c = must_connect(short_heartbeat_url());
  CAF_CHECK_EQUAL(c->heartbeat().count(), 1);
}

CAF_TEST(a publisher kept alive through an idle period publishes at once) {
  auto q = queue("kept");
  auto c = must_connect(short_heartbeat_url());
  CAF_REQUIRE(!c->declare_queue(q));
  auto until = std::chrono::steady_clock::now() + idle_period;
  while (std::chrono::steady_clock::now() < until) {
    CAF_REQUIRE(c->keep_alive());
    std::this_thread::sleep_for(250ms);
  }
  auto st = c->publish_batch({message_to(q)}, 5s);
  CAF_REQUIRE_EQUAL(st.size(), 1u);
  CAF_CHECK_EQUAL(to_string(st[0]), std::string{"confirmed"});
}

CAF_TEST(a connection dropped while idle sends nothing and a session sends it again) {
  auto q = queue("dropped");
  auto url = short_heartbeat_url();
  auto c = must_connect(url);
  CAF_REQUIRE(!c->declare_queue(q));
  amqp_session session{{url, "outbox heartbeat test", {q}, {}, 0}};
  CAF_REQUIRE(!session.ready());
  std::this_thread::sleep_for(idle_period); // silent: the broker drops both
  auto st = c->publish_batch({message_to(q)}, 5s);
  CAF_REQUIRE_EQUAL(st.size(), 1u);
  CAF_CHECK_EQUAL(to_string(st[0]), std::string{"unsent"});
  // The session's first try finds its connection dropped in the same way
  // and sends the message once more over a new one.
  auto again = session.publish({message_to(q)}, 5s);
  CAF_REQUIRE_EQUAL(again.size(), 1u);
  CAF_CHECK_EQUAL(to_string(again[0]), std::string{"confirmed"});
  CAF_CHECK(session.is_open());
}

CAF_TEST(relay and worker complete deliveries on their first attempt after idling) {
  auto q = queue("idle");
  auto url = short_heartbeat_url();
  auto cfg = make_config({make_route("e", "J", q, {})}); // [] : no retry
  cfg.amqp_url = url;
  running_node node{cfg};
  std::atomic<int> runs{0};
  running_worker w{url, q, {{"J", [&](const job_context&) { ++runs; }}}};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; }));
  std::this_thread::sleep_for(idle_period);
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 2; }, 20s));
  CAF_CHECK_EQUAL(count_status("failed"), 0);
  CAF_CHECK_EQUAL(max_attempts(), 0); // no attempt failed
  CAF_CHECK_EQUAL(runs.load(), 2);    // no job ran twice
  auto counters = node.counters_of("dispatcher " + q);
  CAF_CHECK_EQUAL(counters["lost"] + counters["unsent"], 0);
  CAF_CHECK_EQUAL(w.w.counters().completed, 2);
}

CAF_TEST(a cpp handler longer than two heartbeats runs once) {
  auto q = queue("long");
  auto url = short_heartbeat_url();
  auto cfg = make_config({make_route("e", "J", q, {60})});
  running_node node{cfg};
  std::atomic<int> runs{0};
  running_worker w{url, q, {{"J", [&](const job_context&) {
                     if (++runs == 1)
                       std::this_thread::sleep_for(idle_period); // a long job
                   }}}};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; }, 20s));
  // A lost connection would have put the long job back at the head of the
  // queue, so it would run again before a marker job published now.
  publish("e", "{}"); // the marker
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 2; }, 20s));
  CAF_CHECK_EQUAL(runs.load(), 2); // the long job once, then the marker
  CAF_CHECK_EQUAL(max_attempts(), 0);
}

CAF_TEST(the direct producer publishes after idling) {
  auto q = queue("direct");
  auto cfg = make_config({make_route("metrics.cpu", "J", q, {1})});
  cfg.amqp_url = short_heartbeat_url();
  cfg.direct_patterns = {"metrics.*"};
  producer p{cfg};
  event ev;
  ev.event_type = "metrics.cpu";
  ev.payload = "{}";
  CAF_REQUIRE(p.add(db.native(), ev));
  std::this_thread::sleep_for(idle_period);
  auto second = p.add(db.native(), ev);
  CAF_CHECK(second);
  if (!second)
    CAF_MESSAGE("second direct publish: " << render(second.error()));
}

CAF_TEST_FIXTURE_SCOPE_END()
