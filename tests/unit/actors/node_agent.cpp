#define CAF_SUITE actors.node_agent
#define FAIL(msg) CAF_FAIL(msg)
#include "tests/unit/actors/actor_fixture.hpp"

#include "actors/node_agent.hpp"
#include "actors/status.hpp"
#include "core/base/errors.hpp"
#include "core/base/timestamp.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct fixture : actor_fixture {
  status_actor st = sys.spawn(
    status,
    std::vector<named_status_store>{
      {"default", std::make_shared<fakes::status_store>()}},
    false, false);
  node_agent_actor agent;

  node_agent_state& agent_state() {
    return deref<node_agent_actor::stateful_base<node_agent_state>>(agent).state;
  }

  // Whether the status view shows the node draining.
  bool shown_draining() {
    auto res = self->request(st, caf::infinite, status_atom::value);
    sched.run();
    bool out = false;
    res.receive([&](cluster_status& s) { out = s.nodes.at(0).draining; },
                [&](caf::error&) {});
    return out;
  }

  // The status actor's answer to a drain of `node`: its text, or the
  // rendered error.
  std::string drain(const std::string& node) {
    auto res = self->request(st, caf::infinite, drain_atom::value, node);
    sched.run(); // messages only: run() would fire the agent's tick for ever
    std::string out;
    res.receive([&](std::string& s) { out = s; },
                [&](caf::error& err) { out = render(err); });
    return out;
  }

  void join_local_status(std::function<void()> drain = {}) {
    status_address where;
    where.local = st;
    agent = sys.spawn(node_agent, where, std::shared_ptr<results_view>{},
                      std::move(drain), std::shared_ptr<leadership_view>{});
    node_info n;
    n.name = "router:1";
    self->send(agent, join_atom::value, n);
    expect((join_atom, node_info), from(self).to(agent));
    expect((join_atom, node_info), from(agent).to(st));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(node_agent_tests, fixture)

// A connect right after the down message can return the lost connection's
// proxy from the middleman's cache: the node "joins" the dead status actor
// and loses it again at once.
CAF_TEST(after losing the status actor the agent waits before joining again) {
  join_local_status();
  CAF_REQUIRE(agent_state().status == st);
  caf::anon_send_exit(st, caf::exit_reason::kill);
  // Bounded: without the wait, each down message joins the dead actor again
  // and its monitor answers with the next down message.
  sched.run(10);
  CAF_CHECK(agent_state().status == nullptr);
  CAF_CHECK_GREATER(agent_state().next_connect_ms, now_ms());
  // Once the wait is over, the agent's tick tries again.
  agent_state().next_connect_ms = 0;
  CAF_CHECK(sched.trigger_timeout());
  expect((tick_atom), to(agent));
  CAF_CHECK(agent_state().status == st);
  stop(agent); // its tick re-arms forever
}

CAF_TEST(the agent tells the status actor when its wake-ups degrade) {
  join_local_status();
  self->send(agent, wakeup_atom::value, std::string{"listen connection lost"});
  expect((wakeup_atom, std::string), from(self).to(agent));
  CAF_CHECK(sched.trigger_timeout()); // the agent's tick
  expect((tick_atom), to(agent));
  expect((wakeup_atom, std::string, std::string),
         from(agent).to(st).with(_, std::string{"router:1"},
                                  std::string{"listen connection lost"}));
  stop(agent); // its tick re-arms forever
  auto s = request<cluster_status>(st, status_atom::value);
  CAF_CHECK_EQUAL(s.nodes.at(0).wakeups_degraded, "listen connection lost");
}

CAF_TEST(a node that takes a lead wakes its actor of that database) {
  auto named = sys.spawn(status,
                         std::vector<named_status_store>{
                           {"orders", std::make_shared<fakes::status_store>()}},
                         true, false);
  // The last word: another node leads orders' routing.
  auto view = std::make_shared<leadership_view>();
  view->update({{"orders", {{"router", "other:2"}}}}, leadership_view::clock::now());
  status_address where;
  where.local = named;
  agent = sys.spawn(node_agent, where, std::shared_ptr<results_view>{},
                    std::function<void()>{}, view);
  auto router = sys.spawn(wake_counter, "router");
  node_info n;
  n.name = "router:1";
  n.roles = {"router"};
  n.databases = {"orders"};
  n.actors = {{"router@orders", "router", "", router}};
  self->send(agent, join_atom::value, n);
  sched.run();
  // The agent's tick fetches the leaders: this node, the only one left.
  CAF_CHECK(sched.trigger_timeout());
  sched.run();
  CAF_CHECK(view->leads("router", "orders", "router:1", leadership_view::clock::now()));
  auto& wakes = deref<pass_actor::stateful_base<wake_counter_state>>(router).state.wakes;
  CAF_CHECK_EQUAL(wakes, 1);
  stop(agent);
  self->send_exit(named, caf::exit_reason::user_shutdown);
  sched.run();
}

CAF_TEST(one database's wake-ups coming back leave another's reason in place) {
  join_local_status();
  caf::scoped_actor orders{sys};
  caf::scoped_actor billing{sys};
  orders->send(agent, wakeup_atom::value, std::string{"database orders: listen connection lost"});
  billing->send(agent, wakeup_atom::value, std::string{"database billing: not listening yet"});
  sched.run();
  auto both = agent_state().wakeups_degraded;
  CAF_CHECK(both == "database orders: listen connection lost; database billing: not listening yet"
            || both == "database billing: not listening yet; database orders: listen connection lost");
  billing->send(agent, wakeup_atom::value, std::string{});
  sched.run();
  CAF_CHECK_EQUAL(agent_state().wakeups_degraded,
                  "database orders: listen connection lost");
  orders->send(agent, wakeup_atom::value, std::string{});
  sched.run();
  CAF_CHECK_EQUAL(agent_state().wakeups_degraded, "");
  stop(agent);
}

// An operator's drain (outboxctl drain): the status actor asks the node's
// agent, which says yes, shows itself draining and, once its answer has
// left, stops its node through the hook, once.
CAF_TEST(a drained node stops through its hook once its answer has left) {
  int stops = 0;
  join_local_status([&] { ++stops; });
  CAF_CHECK_EQUAL(drain("router:1"), "draining");
  CAF_CHECK(agent_state().draining);
  CAF_CHECK_EQUAL(stops, 0);
  CAF_CHECK(shown_draining());
  advance_time(std::chrono::milliseconds{500});
  sched.run();
  CAF_CHECK_EQUAL(stops, 1);
  // Asked again while it stops: yes again, and no second stop.
  CAF_CHECK_EQUAL(drain("router:1"), "draining");
  advance_time(std::chrono::milliseconds{500});
  sched.run();
  CAF_CHECK_EQUAL(stops, 1);
  stop(agent); // its tick re-arms forever
}

CAF_TEST(a drain of an unknown node or of one that cannot drain is refused) {
  join_local_status(); // no hook: a node that cannot be drained this way
  auto unknown = drain("nobody:1");
  CAF_CHECK_EQUAL(unknown.rfind("drain_refused: no node of that name", 0), 0u);
  CAF_CHECK_NOT_EQUAL(unknown.find("router:1"), std::string::npos); // the names up
  CAF_CHECK_EQUAL(drain("router:1").rfind("drain_refused: that node cannot be drained", 0), 0u);
  CAF_CHECK(!shown_draining());
  stop(agent); // its tick re-arms forever
}

CAF_TEST_FIXTURE_SCOPE_END()
