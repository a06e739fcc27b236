#define CAF_SUITE actors.status
#define FAIL(msg) CAF_FAIL(msg)
#include "tests/unit/actors/actor_fixture.hpp"

#include "actors/node_agent.hpp"
#include "actors/router.hpp"
#include "actors/status.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct fixture : actor_fixture {
  std::shared_ptr<fakes::status_store> store
    = std::make_shared<fakes::status_store>();
  status_actor st = sys.spawn(status, store);
  node_agent_actor agent = sys.spawn(agent_probe, "agent");
  pass_actor disp = sys.spawn(wake_counter, "dispatcher");
  pass_actor results = sys.spawn(wake_counter, "dispatcher");

  node_info worker_node() {
    node_info n;
    n.name = "worker:1";
    n.roles = {"dispatcher", "results"};
    n.queues = {"q"};
    n.actors = {{"dispatcher q", "dispatcher", "q", disp},
                {"results q", "results", "q", results}};
    n.agent = agent;
    return n;
  }

  agent_probe_state& probe() {
    return deref<node_agent_actor::stateful_base<agent_probe_state>>(agent).state;
  }

  void join() {
    self->send(st, join_atom::value, worker_node());
    expect((join_atom, node_info), to(st));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(status_tests, fixture)

CAF_TEST(a joined node is listed with its actors) {
  status_counts counts;
  counts.unrouted_events = 4;
  counts.per_status["pending"] = 2;
  store->next = counts;
  join();
  auto s = request<cluster_status>(st, status_atom::value);
  CAF_CHECK(s.database_ok);
  CAF_CHECK_EQUAL(s.counts.unrouted_events, 4);
  CAF_CHECK_EQUAL(s.counts.per_status["pending"], 2);
  CAF_REQUIRE_EQUAL(s.nodes.size(), 1u);
  CAF_CHECK_EQUAL(s.nodes[0].name, "worker:1");
  CAF_CHECK(s.nodes[0].up);
  CAF_REQUIRE_EQUAL(s.nodes[0].actors.size(), 2u);
  CAF_CHECK_EQUAL(s.nodes[0].actors[1].metrics.name, "results q");
}

CAF_TEST(metrics replace the figures of an actor) {
  join();
  actor_metrics m;
  m.name = "dispatcher q";
  m.role = "dispatcher";
  m.queue = "q";
  m.passes = 9;
  m.rows = 40;
  self->send(st, metrics_atom::value, std::string{"worker:1"},
             std::vector<actor_metrics>{m});
  expect((metrics_atom, std::string, std::vector<actor_metrics>), to(st));
  auto s = request<cluster_status>(st, status_atom::value);
  CAF_CHECK_EQUAL(s.nodes.at(0).actors.at(0).metrics.passes, 9);
  CAF_CHECK_EQUAL(s.nodes.at(0).actors.at(0).metrics.rows, 40);
}

CAF_TEST(a dead actor is shown down) {
  join();
  caf::anon_send_exit(disp, caf::exit_reason::kill);
  sched.run();
  auto s = request<cluster_status>(st, status_atom::value);
  CAF_CHECK(s.nodes.at(0).up);
  CAF_CHECK(!s.nodes.at(0).actors.at(0).up);
  CAF_CHECK(s.nodes.at(0).actors.at(1).up);
}

CAF_TEST(a node whose agent died is shown down with all its actors) {
  join();
  caf::anon_send_exit(agent, caf::exit_reason::kill);
  sched.run();
  auto s = request<cluster_status>(st, status_atom::value);
  CAF_REQUIRE_EQUAL(s.nodes.size(), 1u);
  CAF_CHECK(!s.nodes[0].up);
  CAF_CHECK(s.nodes[0].down_ms > 0);
  CAF_CHECK(!s.nodes[0].actors[0].up);
  CAF_CHECK(!s.nodes[0].actors[1].up);
  // Joining again (the agent reconnected) brings it back up.
  agent = sys.spawn(agent_probe, "agent");
  join();
  s = request<cluster_status>(st, status_atom::value);
  CAF_CHECK(s.nodes.at(0).up);
}

CAF_TEST(a node whose dispatchers miss wake-ups is shown degraded until they do not) {
  join();
  self->send(st, wakeup_atom::value, std::string{"worker:1"},
             std::string{"listen connection lost"});
  expect((wakeup_atom, std::string, std::string), to(st));
  auto s = request<cluster_status>(st, status_atom::value);
  CAF_CHECK_EQUAL(s.nodes.at(0).wakeups_degraded, "listen connection lost");
  self->send(st, wakeup_atom::value, std::string{"worker:1"}, std::string{});
  expect((wakeup_atom, std::string, std::string), to(st));
  s = request<cluster_status>(st, status_atom::value);
  CAF_CHECK(s.nodes.at(0).wakeups_degraded.empty());
}

CAF_TEST(an unreadable database still answers with the cluster view) {
  store->next = make_error(errc::database_unavailable,
                           "cannot connect to 127.0.0.1:5432/postgres");
  join();
  auto s = request<cluster_status>(st, status_atom::value);
  CAF_CHECK(!s.database_ok);
  CAF_CHECK_EQUAL(s.database_error,
                  "database_unavailable: cannot connect to 127.0.0.1:5432/postgres");
  CAF_CHECK_EQUAL(s.nodes.size(), 1u);
}

CAF_TEST(the node agent joins a local status actor and forwards metrics) {
  auto r = sys.spawn(router, std::make_shared<fakes::routing_store>(), 100,
                     std::vector<dispatcher_entry>{}, manual_passes(),
                     node_agent_actor{}, true);
  status_address where;
  where.local = st;
  auto a = sys.spawn(node_agent, where);
  node_info n = worker_node();
  n.actors.push_back({"router", "router", "", r});
  self->send(a, join_atom::value, n);
  expect((join_atom, node_info), from(self).to(a));
  expect((join_atom, node_info), from(a).to(st));
  auto m = identity("dispatcher", "q");
  m.passes = 3;
  self->send(a, metrics_atom::value, m);
  expect((metrics_atom, actor_metrics), from(self).to(a));
  CAF_CHECK(sched.trigger_timeout()); // the agent's tick
  sched.run();
  stop(a); // its tick re-arms forever; the status actor sees it go down
  auto s = request<cluster_status>(st, status_atom::value);
  CAF_CHECK_EQUAL(s.nodes.at(0).actors.at(0).metrics.passes, 3);
  CAF_CHECK(!s.nodes.at(0).up);
}

CAF_TEST(the node agent counts the lifecycle events of its node for the view) {
  status_address where;
  where.local = st;
  auto a = sys.spawn(node_agent, where);
  self->send(a, join_atom::value, worker_node());
  sched.run();
  auto group = lifecycle_group(sys);
  for (auto kind : {lifecycle_kind::published, lifecycle_kind::completed,
                    lifecycle_kind::published}) {
    lifecycle_event ev;
    ev.kind = kind;
    caf::anon_send(group, ev);
  }
  sched.run();
  CAF_CHECK(sched.trigger_timeout()); // the agent's tick sends the counts
  sched.run();
  stop(a); // its tick re-arms forever
  auto s = request<cluster_status>(st, status_atom::value);
  CAF_CHECK_EQUAL(s.nodes.at(0).lifecycle,
                  (std::map<std::string, int64_t>{{"completed", 1},
                                                  {"published", 2}}));
}

CAF_TEST_FIXTURE_SCOPE_END()
