#define CAF_SUITE actors.sweeper
#define FAIL(msg) CAF_FAIL(msg)
#include "tests/unit/actors/actor_fixture.hpp"

#include "actors/sweeper.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

sweep_result swept(int64_t timed_out, int64_t retried, int64_t failed,
                   int64_t expired) {
  sweep_result s;
  s.timed_out = timed_out;
  s.retried = retried;
  s.failed = failed;
  s.expired = expired;
  return s;
}

struct fixture : actor_fixture {
  std::shared_ptr<fakes::delivery_store> store
    = std::make_shared<fakes::delivery_store>();
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(sweeper_tests, fixture)

CAF_TEST(the sweeper reports its decisions) {
  store->sweeps.push_back(swept(3, 2, 1, 4));
  auto s = sys.spawn(sweeper, store, 100, manual_passes(), node_agent_actor{}, nullptr,
                     std::vector<std::string>{});
  CAF_CHECK_EQUAL(request<int64_t>(s, once_atom::value), 7);
  auto& m = pass_state_of(s).metrics;
  CAF_CHECK_EQUAL(m.counters["timed_out"], 3);
  CAF_CHECK_EQUAL(m.counters["retried"], 2);
  CAF_CHECK_EQUAL(m.counters["failed"], 1);
  CAF_CHECK_EQUAL(m.counters["expired"], 4);
}

CAF_TEST(the sweeper announces its transitions as lifecycle events) {
  auto rec = sys.spawn(lifecycle_recorder, "embedder");
  sched.run();
  auto r = swept(1, 0, 1, 1);
  r.transitions.push_back({7, 70, "J", "q", delivery_status::failed, 3, std::nullopt, std::nullopt, {}});
  r.transitions.push_back({8, 80, "J", "q", delivery_status::expired, 1, std::nullopt, std::nullopt, {}});
  store->sweeps.push_back(r);
  auto s = sys.spawn(sweeper, store, 100, manual_passes(), node_agent_actor{}, nullptr,
                     std::vector<std::string>{});
  request<int64_t>(s, once_atom::value);
  sched.run();
  auto& evs = deref<caf::stateful_actor<lifecycle_recorder_state>>(rec).state.events;
  CAF_CHECK_EQUAL(kinds(evs), (std::vector<std::string>{"failed", "expired"}));
  CAF_CHECK_EQUAL(evs.at(0).attempts, 3);
  CAF_CHECK_EQUAL(evs.at(1).delivery_id, 80);
  stop(rec); // the group holds its subscribers until they exit
}

// The agent puts the status node's view where the sweeper reads it
// (actors/results_view.hpp); a queue whose result handlers went missing is
// left alone by the sweep (core/domain/relay_stalls.hpp).
CAF_TEST(the sweep holds the timeouts of a queue whose result handlers stalled) {
  auto view = std::make_shared<results_view>();
  auto s = sys.spawn(sweeper, store, 100, manual_passes(), node_agent_actor{}, view,
                     std::vector<std::string>{"q", "r"});
  view->update({{"q", 0}, {"r", 0}}, std::chrono::steady_clock::now());
  request<int64_t>(s, once_atom::value);
  view->update({{"r", 0}}, std::chrono::steady_clock::now()); // q's node is gone
  request<int64_t>(s, once_atom::value);
  CAF_REQUIRE_EQUAL(store->sweep_requests.size(), 2u);
  CAF_CHECK(store->sweep_requests[0].holds.stalled.empty());
  CAF_CHECK_EQUAL(store->sweep_requests[1].holds.stalled,
                  std::vector<std::string>{"q"});
  CAF_CHECK_EQUAL(store->sweep_requests[1].batch_size, 100);
  CAF_CHECK_EQUAL(pass_state_of(s).metrics.gauges["stalled_queues"], 1);
  // Back: swept again, with the outage moving deadlines.
  view->update({{"q", 0}, {"r", 0}}, std::chrono::steady_clock::now());
  request<int64_t>(s, once_atom::value);
  CAF_REQUIRE_EQUAL(store->sweep_requests.size(), 3u);
  CAF_CHECK(store->sweep_requests[2].holds.stalled.empty());
  CAF_REQUIRE_EQUAL(store->sweep_requests[2].holds.outages.size(), 1u);
  CAF_CHECK_EQUAL(store->sweep_requests[2].holds.outages[0].queue, "q");
  stop(s);
}

CAF_TEST(a full sweep goes again at once and pushes metrics to the agent) {
  store->sweeps.push_back(swept(5, 5, 0, 0));
  auto agent = sys.spawn(agent_probe, "agent");
  auto s = sys.spawn(sweeper, store, 5, pass_settings{}, agent, nullptr,
                     std::vector<std::string>{});
  self->send(s, wake_atom::value);
  expect((wake_atom), from(self).to(s));
  expect((pass_atom, uint64_t), from(s).to(s));
  expect((metrics_atom, actor_metrics), from(s).to(agent));
  expect((pass_atom, uint64_t), from(s).to(s).with(_, 2u));
  expect((metrics_atom, actor_metrics), from(s).to(agent));
  auto& seen = deref<node_agent_actor::stateful_base<agent_probe_state>>(agent)
                 .state.metrics;
  CAF_REQUIRE_EQUAL(seen.size(), 2u);
  CAF_CHECK_EQUAL(seen[1].name, "sweeper");
  CAF_CHECK_EQUAL(seen[1].passes, 2);
  CAF_CHECK_EQUAL(seen[1].rows, 5);
  stop(s);
}

CAF_TEST_FIXTURE_SCOPE_END()
