#define CAF_SUITE integration.event_watcher
#include <caf/test/unit_test.hpp>

#include <chrono>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/event_watcher.hpp"
#include "actors/message_types.hpp"
#include "core/pg/event_probe.hpp"
#include "tests/integration/test_services.hpp"
#include "tests/integration/wait_until.hpp"

using namespace outbox;
using namespace outbox::testing;
using std::chrono::milliseconds;

namespace {

struct watcher_test_config : caf::actor_system_config {
  watcher_test_config() { register_message_types(*this); }
};

// A router stand-in that hands every wake-up on to the test.
router_actor::behavior_type wake_forwarder(router_actor::pointer, caf::actor test) {
  return {
    [test](wake_atom) { caf::anon_send(test, wake_atom::value); },
    [](pass_atom, uint64_t) {},
    [](once_atom) { return int64_t{0}; },
    [](listener_atom, caf::actor&) {},
  };
}

struct fixture : schema_fixture {
  watcher_test_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  caf::actor watcher;

  fixture() {
    auto router = sys.spawn(wake_forwarder, caf::actor{self});
    watcher = sys.spawn(event_watcher, database_url(), names, router);
  }

  ~fixture() {
    caf::anon_send_exit(watcher, caf::exit_reason::user_shutdown);
    self->wait_for(watcher);
  }

  /// The wake-ups that reach the router within `wait` (after the first,
  /// only those already on their way).
  int wakes(milliseconds wait) {
    int n = 0;
    bool more = true;
    while (more)
      self->receive([&](wake_atom) { ++n; wait = milliseconds{100}; },
                    caf::after(wait) >> [&] { more = false; });
    return n;
  }

  /// Milliseconds since the watcher's session last finished a probe (-1
  /// while it has none).
  int64_t ms_since_probe() {
    auto rows = must_exec(db, "SELECT COALESCE((extract(epoch FROM now() - "
                              "state_change) * 1000)::bigint, -1) FROM "
                              "pg_stat_activity WHERE state = 'idle' AND query = $1",
                          {event_probe::sql(names)});
    return rows.size() == 1 ? rows.int64(0, 0) : -1;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(event_watcher_tests, fixture)

CAF_TEST(a commit wakes the router and an open insert does not) {
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1); // connected: one for the gap
  publish("a", "{}");
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
  // Uncommitted, the event is invisible to the probe. A bounded window, on
  // purpose: no event marks a wake-up that did not come; the commit's
  // wake-up below shows the watcher was probing all along.
  CAF_REQUIRE(!db.begin());
  must_exec(db, "SELECT " + names.publish_function + "('a', '{}')");
  CAF_CHECK_EQUAL(wakes(milliseconds{500}), 0);
  CAF_REQUIRE(!db.commit());
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
  publish("a", "{}");
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
}

CAF_TEST(a commit wakes the router above many events that stay unrouted) {
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
  // More events than the probe's window: the newest are what it watches.
  CAF_REQUIRE(!db.begin());
  for (int i = 0; i < 150; ++i)
    must_exec(db, "SELECT " + names.publish_function + "('a', '{}')");
  CAF_REQUIRE(!db.commit());
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
  publish("a", "{}");
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
}

CAF_TEST(told that wake ups are not wanted the watcher stops probing until told again) {
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
  caf::anon_send(watcher, listen_atom::value, false);
  // Paused: its session's last probe grows old (it probes every 25 ms at
  // the most while watching).
  CAF_REQUIRE(wait_until([&] { return ms_since_probe() > 1000; },
                         std::chrono::seconds{10}));
  publish("a", "{}");
  publish("a", "{}");
  CAF_CHECK_EQUAL(wakes(milliseconds{500}), 0);
  // Watching again, it wakes the router once for what committed meanwhile.
  caf::anon_send(watcher, listen_atom::value, true);
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
  CAF_CHECK(wait_until([&] {
    auto ms = ms_since_probe();
    return ms >= 0 && ms < 500;
  }));
  publish("a", "{}");
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
}

CAF_TEST(the watcher stops at once while it does not probe) {
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
  caf::anon_send(watcher, listen_atom::value, false);
  CAF_REQUIRE(wait_until([&] { return ms_since_probe() > 500; },
                         std::chrono::seconds{10}));
  auto start = std::chrono::steady_clock::now();
  caf::anon_send_exit(watcher, caf::exit_reason::user_shutdown);
  self->wait_for(watcher);
  CAF_CHECK_LESS(std::chrono::steady_clock::now() - start, milliseconds{1000});
}

CAF_TEST_FIXTURE_SCOPE_END()
