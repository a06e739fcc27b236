#define CAF_SUITE actors.ready_listener
#include <caf/test/unit_test.hpp>

// The ready listener is a blocking actor on a thread of its own, so these
// tests run it in a real actor system against a scripted listener
// (tests/fakes/fake_stores.hpp) and wait for what it sends, with deadlines.

#include <set>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "actors/message_types.hpp"
#include "actors/ready_listener.hpp"
#include "core/base/errors.hpp"
#include "core/domain/ready_notice.hpp"
#include "tests/fakes/fake_stores.hpp"

using namespace outbox;

namespace {

using namespace std::chrono_literals;

constexpr auto deadline = 10s;

struct system_config : caf::actor_system_config {
  system_config() { register_message_types(*this); }
};

// A dispatcher stand-in: tells the observer its queue on each wake-up.
pass_actor::behavior_type wake_reporter(pass_actor::pointer, caf::actor observer,
                                        std::string queue) {
  return {
    [observer, queue](wake_atom) { caf::anon_send(observer, queue); },
    [](pass_atom, uint64_t) {},
    [](once_atom) { return int64_t{0}; },
  };
}

// A node agent stand-in: tells the observer each state of the wake-up path.
node_agent_actor::behavior_type wakeups_reporter(node_agent_actor::pointer,
                                                 caf::actor observer) {
  return {
    [](status_atom) { return node_report{}; },
    [](metrics_atom, actor_metrics&) {},
    [observer](wakeup_atom, std::string& degraded) {
      caf::anon_send(observer, wakeup_atom::value, std::move(degraded));
    },
    [](join_atom, node_info&) {},
    [](tick_atom) {},
    [](const lifecycle_event&) {},
    [](drain_atom) { return false; },
  };
}

struct fixture {
  system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor observer{sys};
  std::shared_ptr<fakes::notice_channel> channel
    = std::make_shared<fakes::notice_channel>();
  caf::actor listener;

  ~fixture() {
    if (listener)
      caf::anon_send_exit(listener, caf::exit_reason::user_shutdown);
  }

  void start(bool with_agent = true) {
    ready_listener_args args;
    args.listen = channel->factory();
    args.channel = "outbox_ready";
    args.origin = "mine";
    for (std::string q : {"qa", "qb"})
      args.dispatchers.push_back(
        {q, sys.spawn(wake_reporter, caf::actor{observer}, q)});
    if (with_agent)
      args.agent = sys.spawn(wakeups_reporter, caf::actor{observer});
    listener = sys.spawn<caf::detached>(ready_listener, std::move(args));
  }

  // The next thing the listener caused: a wake-up ("wake qa") or a state
  // of the wake-up path ("state <text>"); "" at the deadline.
  std::string next() {
    std::string out;
    observer->receive(
      [&](const std::string& queue) { out = "wake " + queue; },
      [&](wakeup_atom, const std::string& degraded) { out = "state " + degraded; },
      caf::after(deadline) >> [] {});
    return out;
  }

  // Nothing arrives within `quiet` (what must not happen, did not).
  bool silent_for(std::chrono::milliseconds quiet) {
    bool got = false;
    observer->receive(
      [&](const std::string&) { got = true; },
      [&](wakeup_atom, const std::string&) { got = true; },
      caf::after(quiet) >> [] {});
    return !got;
  }

  // Collects the next `n` things, in any order (the dispatchers' wake-ups
  // come from different actors).
  std::multiset<std::string> next(size_t n) {
    std::multiset<std::string> out;
    for (size_t i = 0; i < n; ++i)
      out.insert(next());
    return out;
  }
};

using texts = std::multiset<std::string>;

} // namespace

CAF_TEST_FIXTURE_SCOPE(ready_listener_tests, fixture)

CAF_TEST(a new connection wakes every dispatcher once and tells the agent) {
  channel->add_connection({});
  start();
  auto got = next(4);
  CAF_CHECK_EQUAL(got, (texts{"state not listening yet", "state ", "wake qa",
                              "wake qb"}));
  CAF_CHECK(silent_for(300ms));
}

CAF_TEST(a notice wakes the dispatcher of its queue only) {
  channel->add_connection({std::vector<std::string>{ready_payload("other", "qb")}});
  start(false);
  auto got = next(3); // the connection's two, and the notice's
  CAF_CHECK_EQUAL(got, (texts{"wake qa", "wake qb", "wake qb"}));
  CAF_CHECK(silent_for(300ms));
}

CAF_TEST(notices of its own node or of unknown queues and garbage wake nobody) {
  channel->add_connection({std::vector<std::string>{ready_payload("mine", "qa"),
                                                    ready_payload("other", "qc"),
                                                    "", "no-space-here"}});
  start(false);
  auto got = next(2);
  CAF_CHECK_EQUAL(got, (texts{"wake qa", "wake qb"}));
  CAF_CHECK(silent_for(300ms));
}

CAF_TEST(a refused connection is reported and retried until one succeeds) {
  channel->add_refusal(make_error(errc::database_unavailable, "connect"));
  channel->add_connection({});
  start();
  // The agent's messages arrive in the order sent; nothing is woken before
  // the retry (it comes 200 ms later).
  auto first = next();
  CAF_CHECK_EQUAL(first, "state not listening yet");
  auto down = next();
  CAF_CHECK_EQUAL(down.rfind("state listen connection down: ", 0), 0u);
  auto after_retry = next(3);
  CAF_CHECK_EQUAL(after_retry, (texts{"state ", "wake qa", "wake qb"}));
  CAF_CHECK_EQUAL(channel->connects(), 2);
}

CAF_TEST(a lost connection is reported and the next one wakes every dispatcher) {
  channel->add_connection(
    {make_error(errc::database_unavailable, "connection lost")});
  channel->add_connection({std::vector<std::string>{ready_payload("other", "qa")}});
  start();
  // Two connections: each wakes both dispatchers, the notice qa once more;
  // the agent hears of the first, its loss and the second.
  auto got = next(9);
  CAF_CHECK_EQUAL(got, (texts{"state not listening yet", "state ",
                              "state listen connection lost", "state ",
                              "wake qa", "wake qb", "wake qa", "wake qb",
                              "wake qa"}));
  CAF_CHECK(silent_for(300ms));
  CAF_CHECK_EQUAL(channel->connects(), 2);
}

CAF_TEST_FIXTURE_SCOPE_END()
