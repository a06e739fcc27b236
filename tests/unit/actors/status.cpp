#define CAF_SUITE actors.status
#define FAIL(msg) CAF_FAIL(msg)
#include "tests/unit/actors/actor_fixture.hpp"

#include "actors/join_rules.hpp"
#include "actors/node_agent.hpp"
#include "actors/router.hpp"
#include "actors/status.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct fixture : actor_fixture {
  std::shared_ptr<fakes::status_store> store
    = std::make_shared<fakes::status_store>();
  status_actor st = sys.spawn(status, std::vector<named_status_store>{{"default", store}},
                              false, false);
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
  CAF_REQUIRE_EQUAL(s.databases.size(), 1u);
  CAF_CHECK_EQUAL(s.databases[0].name, "default");
  CAF_CHECK(s.databases[0].ok);
  CAF_CHECK_EQUAL(s.databases[0].counts.unrouted_events, 4);
  CAF_CHECK_EQUAL(s.databases[0].counts.per_status["pending"], 2);
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

// For the sweepers (core/domain/relay_stalls.hpp): which queues have a
// result handler that is up on a node that is up, heard how long ago.
CAF_TEST(the status actor tells which queues have a live result handler) {
  join();
  auto live = request<std::map<std::string, int64_t>>(st, liveness_atom::value);
  CAF_REQUIRE_EQUAL(live.count("q"), 1u);
  CAF_CHECK_LESS(live["q"], 60000); // heard at the join
  caf::anon_send_exit(results, caf::exit_reason::kill);
  sched.run();
  live = request<std::map<std::string, int64_t>>(st, liveness_atom::value);
  CAF_CHECK_EQUAL(live.count("q"), 0u);
}

CAF_TEST(a node not heard from ages its result handlers and a report renews them) {
  status_state state;
  auto& rec = state.nodes["worker:1"];
  rec.view.up = true;
  rec.heard_ms = 10'000;
  actor_view a;
  a.metrics.role = "results";
  a.metrics.queue = "q";
  rec.view.actors.push_back(a);
  auto one = results_liveness_of(state, 12'500);
  CAF_CHECK_EQUAL(one["q"], 2'500);
  // A second node with a handler of q heard later: the freshest counts.
  auto& other = state.nodes["worker:2"];
  other = rec;
  other.heard_ms = 12'000;
  auto two = results_liveness_of(state, 12'500);
  CAF_CHECK_EQUAL(two["q"], 500);
  // A dispatcher of q whose broker blocks publishers: no result can come.
  actor_view d;
  d.metrics.role = "dispatcher";
  d.metrics.queue = "q";
  d.metrics.gauges["broker_blocked"] = 1;
  other.view.actors.push_back(d);
  auto blocked = results_liveness_of(state, 12'500);
  CAF_CHECK_EQUAL(blocked.count("q"), 0u);
  other.view.actors.pop_back();
  other.view.up = false;
  rec.view.actors[0].up = false;
  auto none = results_liveness_of(state, 12'500);
  CAF_CHECK_EQUAL(none.count("q"), 0u);
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

// A join is bounded by what a real node announces; each case breaks one
// rule of a good join, and the view stays as it was.
CAF_TEST(a join a real node could not send is refused and the view stays answerable) {
  struct bad_join {
    const char* name;
    std::function<void(node_info&)> spoil;
  };
  auto many_actors = [this](node_info& n) {
    for (int i = 0; i < 5000; ++i)
      n.actors.push_back({"dispatcher x" + std::to_string(i), "dispatcher",
                          "q", disp});
  };
  std::vector<bad_join> cases{
    {"thousands of actors", many_actors},
    {"an unknown role", [](node_info& n) { n.roles.push_back("admin"); }},
    {"a repeated role", [](node_info& n) { n.roles.push_back("results"); }},
    {"a name with a control character", [](node_info& n) { n.name = "w\n1"; }},
    {"an empty name", [](node_info& n) { n.name.clear(); }},
    {"a name of 10,000 bytes", [](node_info& n) { n.name.assign(10000, 'w'); }},
    {"invalid UTF-8 in the name", [](node_info& n) { n.name = "w\xff"; }},
    {"a repeated queue", [](node_info& n) { n.queues.push_back("q"); }},
    {"a queue no route could have", [](node_info& n) { n.queues = {"q\x01"}; }},
    {"a queue RabbitMQ reserves", [](node_info& n) { n.queues = {"amq.x"}; }},
    {"a repeated actor name",
     [this](node_info& n) { n.actors.push_back({"results q", "results", "q", results}); }},
    {"an actor without a handle",
     [](node_info& n) { n.actors[0].handle = pass_actor{}; }},
    {"no agent", [](node_info& n) { n.agent = node_agent_actor{}; }},
    {"a database no config could name",
     [](node_info& n) { n.databases = {"Orders"}; }},
    {"thousands of databases", [](node_info& n) {
       for (int i = 0; i < 5000; ++i)
         n.databases.push_back("d" + std::to_string(i));
     }},
  };
  for (auto& c : cases) {
    auto n = worker_node();
    c.spoil(n);
    self->send(st, join_atom::value, n);
    expect((join_atom, node_info), to(st));
    auto s = request<cluster_status>(st, status_atom::value);
    if (!s.nodes.empty())
      CAF_ERROR("case " << c.name << ": the node was listed");
  }
  join(); // a good join still works
  CAF_CHECK_EQUAL(request<cluster_status>(st, status_atom::value).nodes.size(), 1u);
}

CAF_TEST(the name of a live node cannot be taken by another agent) {
  join();
  auto other = sys.spawn(agent_probe, "other agent");
  auto n = worker_node();
  n.agent = other;
  n.roles = {"sweeper"};
  n.queues = {};
  n.actors = {};
  self->send(st, join_atom::value, n);
  expect((join_atom, node_info), to(st));
  auto s = request<cluster_status>(st, status_atom::value);
  CAF_REQUIRE_EQUAL(s.nodes.size(), 1u);
  CAF_CHECK_EQUAL(s.nodes[0].roles, (std::vector<std::string>{"dispatcher", "results"}));
  CAF_CHECK(s.nodes[0].up);
  // Its own agent may join again (a rejoin over a connection still up).
  join();
  CAF_CHECK_EQUAL(request<cluster_status>(st, status_atom::value).nodes.size(), 1u);
  caf::anon_send_exit(other, caf::exit_reason::kill);
}

CAF_TEST(reports that the view could not write as JSON leave it as it was) {
  join();
  actor_metrics m;
  m.name = "dispatcher q";
  m.role = "router"; // who an actor is was fixed at the join
  m.passes = 3;
  self->send(st, metrics_atom::value, std::string{"worker:1"},
             std::vector<actor_metrics>{m});
  expect((metrics_atom, std::string, std::vector<actor_metrics>), to(st));
  m.passes = 99;
  m.last_error = "bad \xc3";
  self->send(st, metrics_atom::value, std::string{"worker:1"},
             std::vector<actor_metrics>{m});
  expect((metrics_atom, std::string, std::vector<actor_metrics>), to(st));
  self->send(st, lifecycle_atom::value, std::string{"worker:1"},
             std::map<std::string, int64_t>{{"\xff", 1}});
  expect((lifecycle_atom, std::string, std::map<std::string, int64_t>), to(st));
  self->send(st, wakeup_atom::value, std::string{"worker:1"}, std::string(5000, 'x'));
  expect((wakeup_atom, std::string, std::string), to(st));
  auto s = request<cluster_status>(st, status_atom::value);
  auto& a = s.nodes.at(0).actors.at(0).metrics;
  CAF_CHECK_EQUAL(a.passes, 3);
  CAF_CHECK_EQUAL(a.role, "dispatcher");
  CAF_CHECK(s.nodes.at(0).lifecycle.empty());
  CAF_CHECK_EQUAL(s.nodes.at(0).wakeups_degraded,
                  "degraded (its reason was not readable)");
}

CAF_TEST(a full view makes room by dropping the node down the longest) {
  std::map<std::string, status_state::node_record> nodes;
  join_limits limits;
  limits.max_nodes = 2;
  nodes["a"].view.up = false;
  nodes["a"].view.down_ms = 20;
  nodes["b"].view.up = false;
  nodes["b"].view.down_ms = 10;
  CAF_CHECK(make_room(nodes, "c", false, limits));
  CAF_CHECK_EQUAL(nodes.count("b"), 0u);
  nodes["c"].view.up = true;
  nodes["a"].view.up = true;
  CAF_CHECK(!make_room(nodes, "d", false, limits)); // all up: refused
  CAF_CHECK(!make_room(nodes, "a", false, limits)); // live, another agent
  CAF_CHECK(make_room(nodes, "a", true, limits));   // live, its own agent
}

CAF_TEST(an unreadable database still answers with the cluster view) {
  store->next = make_error(errc::database_unavailable,
                           "cannot connect to 127.0.0.1:5432/postgres");
  join();
  auto s = request<cluster_status>(st, status_atom::value);
  CAF_REQUIRE_EQUAL(s.databases.size(), 1u);
  CAF_CHECK(!s.databases[0].ok);
  CAF_CHECK_EQUAL(s.databases[0].error,
                  "database_unavailable: cannot connect to 127.0.0.1:5432/postgres");
  CAF_CHECK_EQUAL(s.nodes.size(), 1u);
}

CAF_TEST(each database shows its own counts or its own error) {
  auto billing = std::make_shared<fakes::status_store>();
  billing->next = make_error(errc::database_unavailable, "cannot connect");
  status_counts counts;
  counts.unrouted_events = 2;
  store->next = counts;
  auto two = sys.spawn(status,
                       std::vector<named_status_store>{{"billing", billing},
                                                       {"orders", store}},
                       true, false);
  auto s = request<cluster_status>(two, status_atom::value);
  CAF_REQUIRE_EQUAL(s.databases.size(), 2u);
  CAF_CHECK_EQUAL(s.databases[0].name, "billing");
  CAF_CHECK(!s.databases[0].ok);
  CAF_CHECK_EQUAL(s.databases[1].name, "orders");
  CAF_CHECK(s.databases[1].ok);
  CAF_CHECK_EQUAL(s.databases[1].counts.unrouted_events, 2);
  self->send_exit(two, caf::exit_reason::user_shutdown);
}

CAF_TEST(a database that does not answer holds up neither the view nor the others) {
  auto billing = std::make_shared<fakes::status_store>();
  status_counts counts;
  counts.unrouted_events = 2;
  store->next = counts;
  billing->next = counts;
  auto two = sys.spawn(status,
                       std::vector<named_status_store>{{"billing", billing},
                                                       {"orders", store}},
                       true, false);
  sched.run(); // it starts, and spawns its readers
  auto& state = deref<status_actor::stateful_base<status_state>>(two).state;
  auto billing_reader = caf::actor_cast<caf::actor>(state.databases.at(0).reader);
  auto orders_reader = caf::actor_cast<caf::actor>(state.databases.at(1).reader);
  auto asker = caf::scoped_actor{sys};
  asker->send(two, status_atom::value);
  sched.prioritize(two);
  sched.run_once(); // both reads asked for
  // Only orders answers; billing's reader stays busy, as on a database
  // that does not answer.
  sched.prioritize(orders_reader);
  sched.run_once();
  sched.prioritize(two);
  sched.run_once();
  CAF_CHECK(asker->mailbox().empty());
  // The status actor goes on meanwhile: a node joins.
  self->send(two, join_atom::value, worker_node());
  sched.prioritize(two);
  sched.run_once();
  CAF_CHECK_EQUAL(state.nodes.size(), 1u);
  // The answer's deadline: orders' counts, billing's reason.
  CAF_REQUIRE(sched.trigger_timeout());
  sched.prioritize(two);
  sched.run_once();
  bool answered = false;
  asker->receive(
    [&](cluster_status& s) {
      answered = true;
      CAF_REQUIRE_EQUAL(s.databases.size(), 2u);
      CAF_CHECK(!s.databases[0].ok);
      CAF_CHECK_NOT_EQUAL(s.databases[0].error.find("slow or unreachable"),
                          std::string::npos);
      CAF_CHECK(s.databases[1].ok);
      CAF_CHECK_EQUAL(s.databases[1].counts.unrouted_events, 2);
      CAF_CHECK_EQUAL(s.nodes.size(), 1u);
    },
    caf::after(std::chrono::seconds{0}) >> [] {});
  CAF_CHECK(answered);
  // Billing's read ends late: the next answer has both, from reads that
  // began after it asked.
  sched.prioritize(billing_reader);
  sched.run_once();
  auto s = request<cluster_status>(two, status_atom::value);
  CAF_CHECK(s.databases.at(0).ok);
  CAF_CHECK(s.databases.at(1).ok);
  CAF_CHECK_EQUAL(billing->reads, 2);
  self->send_exit(two, caf::exit_reason::user_shutdown);
  sched.run();
}

CAF_TEST(a database known to count slowly shows its last counts while it counts again) {
  counts_cache c;
  database_status last;
  last.name = "orders";
  last.ok = true;
  last.counts.unrouted_events = 9;
  c.last = last;
  c.last_started_ms = 1000;
  c.last_ended_ms = 5000; // 4 s, longer than an answer waits
  c.reading = true;
  c.reading_since_ms = 10000;
  // Asked at 10 s: the running read began at the ask, and is not in.
  CAF_CHECK(!c.fresh_for(10001));
  auto shown = c.shown("orders", 10001, 11600);
  CAF_CHECK(shown.ok);
  CAF_CHECK_EQUAL(shown.counts.unrouted_events, 9);
  // Three times as long as last time: something is wrong now.
  shown = c.shown("orders", 10001, 22001);
  CAF_CHECK(!shown.ok);
  CAF_CHECK_EQUAL(shown.error, "reading its counts has taken 12.0 s so far: the "
                               "database is slow or unreachable");
  // A read that began before the ask and ended after it: its counts.
  c.last_started_ms = 10300;
  c.last_ended_ms = 10400;
  c.reading_since_ms = 10400;
  CAF_CHECK(c.shown("orders", 10350, 11900).ok);
  c.last_started_ms = 1000;
  // A database that counts fast and is late says so at the deadline.
  c.last_ended_ms = 1200;
  shown = c.shown("orders", 10001, 11501);
  CAF_CHECK(!shown.ok);
}

CAF_TEST(the node agent joins a local status actor and forwards metrics) {
  auto r = sys.spawn(router, std::make_shared<fakes::routing_store>(), 100,
                     std::vector<dispatcher_entry>{},
                     std::vector<std::shared_ptr<handoff_box>>{}, manual_passes(),
                     node_agent_actor{}, true);
  status_address where;
  where.local = st;
  auto a = sys.spawn(node_agent, where, std::shared_ptr<results_view>{},
                     std::function<void()>{}, std::shared_ptr<leadership_view>{});
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
  auto a = sys.spawn(node_agent, where, std::shared_ptr<results_view>{},
                     std::function<void()>{}, std::shared_ptr<leadership_view>{});
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
