#define CAF_SUITE integration.notify_listener
#include <caf/test/unit_test.hpp>

#include <chrono>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/notify_listener.hpp"
#include "tests/integration/test_services.hpp"
#include "tests/integration/wait_until.hpp"

using namespace outbox;
using namespace outbox::testing;
using std::chrono::milliseconds;

namespace {

struct listener_test_config : caf::actor_system_config {
  listener_test_config() { register_message_types(*this); }
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
  listener_test_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  caf::actor listener;

  fixture() {
    auto router = sys.spawn(wake_forwarder, caf::actor{self});
    listener = sys.spawn(notify_listener, database_url(), names.notify_channel(),
                         router);
  }

  ~fixture() {
    caf::anon_send_exit(listener, caf::exit_reason::user_shutdown);
    self->wait_for(listener);
  }

  /// The wake-ups that reach the router within `wait` (after the first,
  /// only those already on their way).
  int wakes(milliseconds wait) {
    int n = 0;
    bool more = true;
    while (more)
      self->receive([&](wake_atom) { ++n; wait = milliseconds{50}; },
                    caf::after(wait) >> [&] { more = false; });
    return n;
  }

  /// Waits until the listener's session last ran `statement` on the channel.
  bool session_ran(const std::string& statement) {
    return wait_until([&] {
      auto rows = must_exec(db,
                            "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle' "
                            "AND query = $1 || ' \"' || $2 || '\"'",
                            {statement, names.notify_channel()});
      return rows.int64(0, 0) == 1;
    }, std::chrono::seconds{5});
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(notify_listener_tests, fixture)

CAF_TEST(told that wake ups are not wanted the listener unlistens until told again) {
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1); // LISTEN, then one for the gap
  CAF_REQUIRE(session_ran("LISTEN"));
  publish("a", "{}");
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);

  caf::anon_send(listener, listen_atom::value, false);
  CAF_REQUIRE(session_ran("UNLISTEN"));
  publish("a", "{}");
  publish("a", "{}");
  // A bounded observation window, on purpose: no event marks a wake-up
  // that did not come. The single wake-up after listening again (below)
  // shows that these two did not queue up either.
  constexpr milliseconds unlistened_window{500};
  CAF_CHECK_EQUAL(wakes(unlistened_window), 0);

  // Listening again, it wakes the router once for what committed meanwhile.
  caf::anon_send(listener, listen_atom::value, true);
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
  CAF_CHECK(session_ran("LISTEN"));
  publish("a", "{}");
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
}

CAF_TEST(the listener stops at once while it does not listen) {
  CAF_CHECK_EQUAL(wakes(milliseconds{5000}), 1);
  caf::anon_send(listener, listen_atom::value, false);
  CAF_REQUIRE(session_ran("UNLISTEN"));
  auto start = std::chrono::steady_clock::now();
  caf::anon_send_exit(listener, caf::exit_reason::user_shutdown);
  self->wait_for(listener);
  CAF_CHECK_LESS(std::chrono::steady_clock::now() - start, milliseconds{1000});
}

CAF_TEST_FIXTURE_SCOPE_END()
