#define CAF_SUITE actors.router
#define FAIL(msg) CAF_FAIL(msg)
#include "tests/unit/actors/actor_fixture.hpp"

#include "actors/router.hpp"

using namespace outbox;
using namespace outbox::testing;
using std::chrono::milliseconds;

namespace {

routing_result routed(int64_t events, std::map<std::string, int64_t> per_queue) {
  routing_result r;
  r.events_routed = events;
  r.per_queue = std::move(per_queue);
  return r;
}

/// A NOTIFY listener stand-in: keeps what the router says it wants.
struct listen_probe_state {
  std::string label;
  std::vector<bool> said;
  static inline const char* name = "listen probe";
};

caf::behavior listen_probe(caf::stateful_actor<listen_probe_state>* self,
                           std::string label) {
  self->state.label = std::move(label);
  return {
    [self](listen_atom, bool wanted) { self->state.said.push_back(wanted); },
  };
}

struct fixture : actor_fixture {
  std::shared_ptr<fakes::routing_store> store
    = std::make_shared<fakes::routing_store>();
  pass_actor da = sys.spawn(wake_counter, "dispatcher");
  pass_actor db = sys.spawn(wake_counter, "dispatcher");

  std::shared_ptr<handoff_box> box_a = std::make_shared<handoff_box>("a");

  router_actor spawn_router(pass_settings s, int32_t batch = 100) {
    return sys.spawn(router, store, batch,
                     std::vector<dispatcher_entry>{{"a", da}, {"b", db}},
                     std::vector<std::shared_ptr<handoff_box>>{box_a}, s,
                     node_agent_actor{}, true);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(router_tests, fixture)

CAF_TEST(a routing pass wakes the dispatchers of queues that got deliveries) {
  store->script.push_back(routed(3, {{"a", 2}, {"b", 0}}));
  auto r = spawn_router(manual_passes());
  self->send(r, wake_atom::value);
  expect((wake_atom), from(self).to(r));
  expect((pass_atom, uint64_t), from(r).to(r));
  expect((wake_atom), from(r).to(da));
  disallow((wake_atom), from(r).to(db));
  CAF_CHECK_EQUAL(store->calls, 1);
  CAF_CHECK_EQUAL(pass_state_of(r).metrics.rows, 3);
}

CAF_TEST(a router runs its passes only while its node leads its database) {
  auto view = std::make_shared<leadership_view>();
  auto s = manual_passes();
  s.database = "orders";
  s.leader = pass_leader{view, "router", "a:1"};
  auto r = spawn_router(s);
  view->update({{"orders", {{"router", "b:2"}}}}, leadership_view::clock::now());
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 0);
  CAF_CHECK_EQUAL(store->calls, 0);
  CAF_CHECK_EQUAL(pass_state_of(r).metrics.gauges["leader"], 0);
  CAF_CHECK_EQUAL(pass_state_of(r).metrics.name, "router@orders");
  view->update({{"orders", {{"router", "a:1"}}}}, leadership_view::clock::now());
  request<int64_t>(r, once_atom::value);
  CAF_CHECK_EQUAL(store->calls, 1);
  CAF_CHECK_EQUAL(pass_state_of(r).metrics.gauges["leader"], 1);
}

CAF_TEST(a dispatcher is offered its credit while it can publish) {
  auto r = spawn_router(manual_passes());
  box_a->set_credit(7); // not accepting yet
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 0);
  box_a->set_accepting(true);
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 0);
  box_a->set_credit(0);
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 0);
  CAF_REQUIRE_EQUAL(store->offers.size(), 3u);
  CAF_CHECK(store->offers[0].empty());
  CAF_REQUIRE_EQUAL(store->offers[1].size(), 1u);
  CAF_CHECK_EQUAL(store->offers[1][0].queue, "a");
  CAF_CHECK_EQUAL(store->offers[1][0].room, 7);
  CAF_CHECK(store->offers[2].empty());
}

CAF_TEST(handed deliveries go into the box of their queue and wake its dispatcher) {
  box_a->set_accepting(true);
  box_a->set_credit(5);
  auto res = routed(2, {});
  res.handed["a"] = {{11, "d-11"}, {12, "d-12"}};
  store->script.push_back(res);
  auto r = spawn_router(manual_passes());
  self->send(r, wake_atom::value);
  expect((wake_atom), from(self).to(r));
  expect((pass_atom, uint64_t), from(r).to(r));
  expect((wake_atom), from(r).to(da));
  disallow((wake_atom), from(r).to(db));
  auto taken = box_a->take();
  CAF_REQUIRE_EQUAL(taken.size(), 2u);
  CAF_CHECK_EQUAL(taken[0].id, 11);
  CAF_CHECK_EQUAL(taken[1].dispatch_id, "d-12");
  CAF_CHECK_EQUAL(box_a->waiting(), 0u);
  CAF_CHECK_EQUAL(box_a->credit(), 3); // each handed one used a credit
}

CAF_TEST(without immediate delivery the dispatchers are left to their timers) {
  store->script.push_back(routed(3, {{"a", 2}}));
  auto r = sys.spawn(router, store, 100,
                     std::vector<dispatcher_entry>{{"a", da}, {"b", db}},
                     std::vector<std::shared_ptr<handoff_box>>{},
                     manual_passes(), node_agent_actor{}, false);
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 3);
  disallow((wake_atom), from(r).to(da));
}

CAF_TEST(a full batch runs the next pass at once and then the idle sleep) {
  pass_settings s; // self-driven, idle 1 s
  store->script.push_back(routed(10, {{"a", 10}}));
  store->script.push_back(routed(4, {{"a", 4}}));
  auto r = spawn_router(s, 10);
  self->send(r, wake_atom::value);
  expect((wake_atom), from(self).to(r));
  expect((pass_atom, uint64_t), from(r).to(r));
  expect((wake_atom), from(r).to(da));
  expect((pass_atom, uint64_t), from(r).to(r).with(_, 2u));
  expect((wake_atom), from(r).to(da));
  CAF_CHECK_EQUAL(store->calls, 2);
  CAF_CHECK_EQUAL(advance_time(milliseconds{999}), 0u);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  expect((pass_atom, uint64_t), from(r).to(r).with(_, 3u));
  CAF_CHECK_EQUAL(store->calls, 3);
  stop(r);
}

CAF_TEST(wake ups that pile up cost one pass and replace the armed timer) {
  pass_settings s;
  auto r = spawn_router(s);
  for (int i = 0; i < 3; ++i)
    self->send(r, wake_atom::value);
  expect((wake_atom), from(self).to(r));
  expect((wake_atom), from(self).to(r));
  expect((wake_atom), from(self).to(r));
  expect((pass_atom, uint64_t), from(r).to(r));
  disallow((pass_atom, uint64_t), from(r).to(r));
  CAF_CHECK_EQUAL(store->calls, 1); // and the idle timer is armed
  self->send(r, wake_atom::value);
  expect((wake_atom), from(self).to(r));
  expect((pass_atom, uint64_t), from(r).to(r));
  CAF_CHECK_EQUAL(store->calls, 2);
  advance_time(milliseconds{1000}); // both timers fire, the first is stale
  sched.run();
  CAF_CHECK_EQUAL(store->calls, 3);
  stop(r);
}

CAF_TEST(under load the router lingers and wake ups wait for that pass) {
  pass_settings s; // self-driven, idle 1 s
  s.linger = milliseconds{5};
  s.linger_min_rows = 3;
  store->script.push_back(routed(3, {{"a", 3}}));
  store->script.push_back(routed(2, {{"a", 2}}));
  store->script.push_back(routed(1, {{"a", 1}}));
  auto r = spawn_router(s);
  self->send(r, wake_atom::value);
  expect((wake_atom), from(self).to(r));
  expect((pass_atom, uint64_t), from(r).to(r));
  expect((wake_atom), from(r).to(da));
  // Three events in one pass: the NOTIFYs meanwhile start no pass.
  self->send(r, wake_atom::value);
  self->send(r, wake_atom::value);
  expect((wake_atom), from(self).to(r));
  expect((wake_atom), from(self).to(r));
  disallow((pass_atom, uint64_t), from(r).to(r));
  CAF_CHECK_EQUAL(store->calls, 1);
  CAF_CHECK_EQUAL(advance_time(milliseconds{4}), 0u);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  expect((pass_atom, uint64_t), from(r).to(r));
  expect((wake_atom), from(r).to(da));
  CAF_CHECK_EQUAL(store->calls, 2);
  // Two events: below the threshold, so a wake-up passes at once again.
  self->send(r, wake_atom::value);
  expect((wake_atom), from(self).to(r));
  expect((pass_atom, uint64_t), from(r).to(r));
  CAF_CHECK_EQUAL(store->calls, 3);
  stop(r);
}

CAF_TEST(a full batch passes again at once even with a linger) {
  pass_settings s;
  s.linger = milliseconds{5};
  s.linger_min_rows = 3;
  store->script.push_back(routed(10, {{"a", 10}}));
  store->script.push_back(routed(0, {}));
  auto r = spawn_router(s, 10);
  self->send(r, wake_atom::value);
  expect((wake_atom), from(self).to(r));
  expect((pass_atom, uint64_t), from(r).to(r));
  expect((wake_atom), from(r).to(da));
  expect((pass_atom, uint64_t), from(r).to(r));
  CAF_CHECK_EQUAL(store->calls, 2);
  stop(r);
}

CAF_TEST(under sustained load the router stops its listener and restarts it after) {
  const int n = listener_pause_after_passes;
  pass_settings s;
  s.linger = milliseconds{5};
  s.linger_min_rows = 3;
  for (int i = 0; i < n; ++i)
    store->script.push_back(routed(3, {{"a", 3}}));
  store->script.push_back(routed(1, {{"a", 1}}));
  auto r = spawn_router(s);
  auto l = sys.spawn(listen_probe, "listener");
  auto& said = deref<caf::stateful_actor<listen_probe_state>>(l).state.said;
  self->send(r, listener_atom::value, l);
  self->send(r, wake_atom::value);
  sched.run(); // the first lingering pass
  for (int i = 1; i < n; ++i) {
    CAF_CHECK(said.empty());
    CAF_CHECK_EQUAL(advance_time(milliseconds{5}), 1u);
    sched.run();
  }
  // n lingering passes in a row: no wake-up was needed for any of them.
  CAF_CHECK_EQUAL(said, std::vector<bool>{false});
  CAF_CHECK_EQUAL(store->calls, n);
  CAF_CHECK_EQUAL(advance_time(milliseconds{5}), 1u);
  sched.run();
  // One event: the router waits for work again and needs wake-ups.
  CAF_CHECK_EQUAL(store->calls, n + 1);
  CAF_CHECK_EQUAL(said, (std::vector<bool>{false, true}));
  stop(r);
}

CAF_TEST(a router that does not lead stops its watcher and starts it once it leads) {
  const int n = listener_pause_after_passes;
  auto view = std::make_shared<leadership_view>();
  pass_settings s; // self-driven, idle 1 s
  s.database = "orders";
  s.leader = pass_leader{view, "router", "a:1"};
  view->update({{"orders", {{"router", "b:2"}}}}, leadership_view::clock::now());
  auto r = spawn_router(s);
  auto l = sys.spawn(listen_probe, "listener");
  auto& said = deref<caf::stateful_actor<listen_probe_state>>(l).state.said;
  self->send(r, listener_atom::value, l);
  self->send(r, wake_atom::value);
  sched.run(); // the first pass, which does not lead
  for (int i = 1; i < n; ++i) {
    CAF_CHECK(said.empty());
    view->update({{"orders", {{"router", "b:2"}}}}, leadership_view::clock::now());
    CAF_CHECK_EQUAL(advance_time(milliseconds{1000}), 1u);
    sched.run();
  }
  CAF_CHECK_EQUAL(said, std::vector<bool>{false});
  CAF_CHECK_EQUAL(store->calls, 0);
  // It leads now: its first pass waits for work and wants wake-ups.
  view->update({{"orders", {{"router", "a:1"}}}}, leadership_view::clock::now());
  CAF_CHECK_EQUAL(advance_time(milliseconds{1000}), 1u);
  sched.run();
  CAF_CHECK_EQUAL(store->calls, 1);
  CAF_CHECK_EQUAL(said, (std::vector<bool>{false, true}));
  stop(r);
}

CAF_TEST(a pass that waits for a wake up restarts the count of self paced passes) {
  const int n = listener_pause_after_passes;
  pass_settings s;
  s.linger = milliseconds{5};
  s.linger_min_rows = 3;
  auto r = spawn_router(s, 10);
  auto l = sys.spawn(listen_probe, "listener");
  auto& said = deref<caf::stateful_actor<listen_probe_state>>(l).state.said;
  self->send(r, listener_atom::value, l);
  sched.run();
  // Full batches and lingers alike pace the router, but one quiet pass
  // among them starts the count again.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < n - 1; ++i)
      store->script.push_back(i % 2 ? routed(10, {{"a", 10}}) : routed(4, {{"a", 4}}));
    store->script.push_back(routed(0, {}));
    self->send(r, wake_atom::value);
    sched.run();
    while (advance_time(milliseconds{5}) > 0)
      sched.run();
    CAF_CHECK_EQUAL(store->calls, (round + 1) * n);
  }
  CAF_CHECK(said.empty());
  stop(r);
}

CAF_TEST(a failing store backs off 200 ms then 400 ms and reports it) {
  pass_settings s;
  store->script.push_back(make_error(errc::database_unavailable, "db down"));
  store->script.push_back(make_error(errc::database_unavailable, "db down"));
  auto r = spawn_router(s);
  self->send(r, wake_atom::value);
  expect((wake_atom), from(self).to(r));
  expect((pass_atom, uint64_t), from(r).to(r));
  auto& st = pass_state_of(r);
  CAF_CHECK_EQUAL(st.metrics.errors, 1);
  CAF_CHECK_EQUAL(st.metrics.connected, false);
  CAF_CHECK_EQUAL(st.metrics.last_error, "database_unavailable: db down");
  CAF_CHECK_EQUAL(advance_time(milliseconds{199}), 0u);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  sched.run();
  CAF_CHECK_EQUAL(st.metrics.errors, 2);
  CAF_CHECK_EQUAL(advance_time(milliseconds{399}), 0u);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  sched.run();
  CAF_CHECK_EQUAL(st.metrics.connected, true); // the third pass worked
  CAF_CHECK_EQUAL(st.failures.count(), 0);
  stop(r);
}

// NOTIFYs keep coming while the database is away: each would start a pass
// (and a failure) at once if wake-ups cut the backoff short.
CAF_TEST(wake-ups during a backoff start no pass and the pass after it runs once) {
  pass_settings s;
  store->script.push_back(make_error(errc::database_unavailable, "db down"));
  auto r = spawn_router(s);
  self->send(r, wake_atom::value);
  expect((wake_atom), from(self).to(r));
  expect((pass_atom, uint64_t), from(r).to(r));
  CAF_CHECK_EQUAL(store->calls, 1);
  for (int i = 0; i < 50; ++i)
    self->send(r, wake_atom::value);
  sched.run();
  CAF_CHECK_EQUAL(store->calls, 1); // still backing off
  CAF_CHECK_EQUAL(advance_time(milliseconds{199}), 0u);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  sched.run();
  CAF_CHECK_EQUAL(store->calls, 2); // one pass for the backoff and all 50
  CAF_CHECK_EQUAL(pass_state_of(r).failures.count(), 0);
  // Recovered: a wake-up starts a pass at once again.
  self->send(r, wake_atom::value);
  sched.run();
  CAF_CHECK_EQUAL(store->calls, 3);
  stop(r);
}

CAF_TEST(once drains the backlog and replies with the rows) {
  store->script.push_back(routed(100, {}));
  store->script.push_back(routed(7, {}));
  auto r = spawn_router(manual_passes());
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 107);
  CAF_CHECK_EQUAL(store->calls, 2);
}

CAF_TEST_FIXTURE_SCOPE_END()
