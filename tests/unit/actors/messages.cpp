#define CAF_SUITE actors.messages
#define FAIL(msg) CAF_FAIL(msg)
#include "tests/unit/actors/actor_fixture.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

using namespace outbox;
using namespace outbox::testing;

namespace {

struct fixture : actor_fixture {
  // Serializes as the middleman does for a remote node, and reads it back.
  template <class T>
  T roundtrip(const T& x) {
    auto msg = caf::make_message(x);
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    if (auto err = msg.save(sink))
      CAF_FAIL("cannot serialize: " << sys.render(err));
    caf::message back;
    caf::binary_deserializer source{sys, buf};
    if (auto err = back.load(source))
      CAF_FAIL("cannot deserialize: " << sys.render(err));
    CAF_REQUIRE(back.match_elements<T>());
    return back.get_as<T>(0);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(message_tests, fixture)

CAF_TEST(cluster status crosses a node boundary intact) {
  cluster_status s;
  s.now_ms = 1234;
  database_status db;
  db.name = "orders";
  db.ok = true;
  db.counts.unrouted_events = 3;
  db.counts.per_status["completed"] = 9;
  db.counts.per_queue["q"].per_status["pending"] = 2;
  db.counts.per_queue["q"].oldest_open_age_seconds = 1.5;
  s.databases = {db, database_status{}};
  node_view n;
  n.name = "h:1";
  n.roles = {"router"};
  n.up = false;
  n.down_ms = 99;
  n.wakeups_degraded = "listen connection lost";
  actor_view a;
  a.metrics = identity("router");
  a.metrics.counters["deliveries"] = 5;
  a.metrics.last_error = "database_unavailable: x";
  n.actors.push_back(a);
  s.nodes.push_back(n);
  auto b = roundtrip(s);
  CAF_CHECK_EQUAL(b.now_ms, 1234);
  CAF_REQUIRE_EQUAL(b.databases.size(), 2u);
  CAF_CHECK_EQUAL(b.databases[0].name, "orders");
  CAF_CHECK(b.databases[0].ok);
  CAF_CHECK(!b.databases[1].ok);
  auto& c = b.databases[0].counts;
  CAF_CHECK_EQUAL(c.unrouted_events, 3);
  CAF_CHECK_EQUAL(c.per_status["completed"], 9);
  CAF_CHECK_EQUAL(c.per_queue["q"].per_status["pending"], 2);
  CAF_CHECK_EQUAL(c.per_queue["q"].oldest_open_age_seconds, 1.5);
  CAF_REQUIRE_EQUAL(b.nodes.size(), 1u);
  CAF_CHECK_EQUAL(b.nodes[0].down_ms, 99);
  CAF_CHECK_EQUAL(b.nodes[0].wakeups_degraded, "listen connection lost");
  CAF_CHECK(!b.nodes[0].up);
  CAF_CHECK_EQUAL(b.nodes[0].actors.at(0).metrics.counters["deliveries"], 5);
  CAF_CHECK_EQUAL(b.nodes[0].actors.at(0).metrics.last_error,
                  "database_unavailable: x");
}

// Actor handles inside node_info need a middleman to
// be read back; the multi-process integration test carries them for real.
CAF_TEST(node announcements and metrics keep their fields) {
  node_info n;
  n.name = "h:2";
  n.roles = {"dispatcher"};
  n.queues = {"q"};
  n.actors = {{"dispatcher q", "dispatcher", "q", pass_actor{}}};
  auto b = roundtrip(n);
  CAF_CHECK_EQUAL(b.name, "h:2");
  CAF_CHECK_EQUAL(b.queues, n.queues);
  CAF_REQUIRE_EQUAL(b.actors.size(), 1u);
  CAF_CHECK_EQUAL(b.actors[0].name, "dispatcher q");
  auto ms = roundtrip(std::vector<actor_metrics>{identity("results", "q")});
  CAF_CHECK_EQUAL(ms.at(0).name, "results q");
  CAF_CHECK_EQUAL(ms.at(0).role, "results");
}

CAF_TEST_FIXTURE_SCOPE_END()
