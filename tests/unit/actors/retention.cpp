#define CAF_SUITE actors.retention
#define FAIL(msg) CAF_FAIL(msg)
#include "tests/unit/actors/actor_fixture.hpp"

#include <deque>

#include "actors/retention.hpp"
#include "core/base/errors.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Leads when told to, and deletes what the test queued, per status.
struct fake_retention_store : retention_store {
  bool leads = true;
  bool reachable = true;
  std::map<delivery_status, std::deque<deleted_rows>> finished;
  std::deque<int64_t> quarantined;
  std::vector<std::string> asked; ///< "status hours" of each delete
  double quarantined_hours = -1;

  caf::expected<bool> lead() override {
    if (!reachable)
      return make_error(errc::database_unavailable, "cannot connect");
    return leads;
  }

  int step_downs = 0;
  void step_down() override { ++step_downs; }

  caf::expected<deleted_rows> delete_finished(delivery_status status,
                                              double hours, int32_t) override {
    asked.push_back(std::string{to_string(status)} + " "
                    + std::to_string(static_cast<int>(hours)));
    auto& q = finished[status];
    if (q.empty())
      return deleted_rows{};
    auto r = q.front();
    q.pop_front();
    return r;
  }

  std::deque<ring_outcome> turns;
  std::vector<std::string> ring_asked; ///< "completed longest" hours of each turn

  bool ring_fails = false;

  caf::expected<ring_outcome> turn_ring(double completed_hours,
                                        double longest_hours) override {
    ring_asked.push_back(std::to_string(static_cast<int>(completed_hours)) + " "
                         + std::to_string(static_cast<int>(longest_hours)));
    if (ring_fails)
      return make_error(errc::database_error, "deadlock detected");
    if (turns.empty())
      return ring_outcome{};
    auto r = turns.front();
    turns.pop_front();
    return r;
  }

  caf::expected<int64_t> delete_quarantined_events(double hours, int32_t) override {
    quarantined_hours = hours;
    if (quarantined.empty())
      return int64_t{0};
    auto n = quarantined.front();
    quarantined.pop_front();
    return n;
  }
};

struct fixture : actor_fixture {
  std::shared_ptr<fake_retention_store> store
    = std::make_shared<fake_retention_store>();
  retention_policy policy; // the defaults: 6, 6, 168, 168 hours
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(retention_tests, fixture)

CAF_TEST(the leader deletes each final status by its window and counts it) {
  policy.failed_hours = 0; // kept forever: never asked for
  store->finished[delivery_status::completed].push_back({5, 3});
  store->finished[delivery_status::expired].push_back({2, 2});
  store->quarantined.push_back(1);
  auto r = sys.spawn(retention, store, policy, manual_passes(), node_agent_actor{});
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 13);
  CAF_CHECK_EQUAL(store->asked, (std::vector<std::string>{
                                  "completed 6", "superseded 6", "expired 168"}));
  CAF_CHECK_EQUAL(store->quarantined_hours, 168.0);
  auto& m = pass_state_of(r).metrics;
  CAF_CHECK_EQUAL(m.name, "retention");
  CAF_CHECK_EQUAL(m.counters["deleted_deliveries"], 7);
  CAF_CHECK_EQUAL(m.counters["deleted_events"], 6);
  CAF_CHECK_EQUAL(m.counters["deleted_completed"], 5);
  CAF_CHECK_EQUAL(m.counters["deleted_expired"], 2);
  CAF_CHECK_EQUAL(m.counters["took_lead"], 1);
}

CAF_TEST(retention follows the leader of sweeping and lets go of its lock elsewhere) {
  auto view = std::make_shared<leadership_view>();
  auto s = manual_passes();
  s.database = "orders";
  s.leader = pass_leader{view, "sweeper", "a:1"};
  store->finished[delivery_status::completed].push_back({5, 3});
  auto r = sys.spawn(retention, store, policy, s, node_agent_actor{});
  // Another node leads: no lock is taken, none is kept, nothing deleted.
  view->update({{"orders", {{"sweeper", "b:2"}}}}, leadership_view::clock::now());
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 0);
  CAF_CHECK_EQUAL(store->step_downs, 1);
  CAF_CHECK(store->asked.empty());
  // This node leads: it takes the lock and deletes.
  view->update({{"orders", {{"sweeper", "a:1"}}}}, leadership_view::clock::now());
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 8);
  CAF_CHECK_EQUAL(pass_state_of(r).metrics.counters["took_lead"], 1);
  // The lead moves on: this node lets go at its next pass.
  view->update({{"orders", {{"sweeper", "b:2"}}}}, leadership_view::clock::now());
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 0);
  CAF_CHECK_EQUAL(store->step_downs, 2);
}

CAF_TEST(an emptied partition of the ring counts its rows with the completed) {
  ring_outcome emptied;
  emptied.emptied = true;
  emptied.deleted = {40, 30}; // log rows, events
  emptied.kept = {1, 2};
  store->turns.push_back(emptied);
  store->finished[delivery_status::completed].push_back({5, 3});
  auto r = sys.spawn(retention, store, policy, manual_passes(), node_agent_actor{});
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 78);
  CAF_CHECK_EQUAL(store->ring_asked, (std::vector<std::string>{"6 168"}));
  auto& m = pass_state_of(r).metrics;
  CAF_CHECK_EQUAL(m.counters["emptied_partitions"], 1);
  CAF_CHECK_EQUAL(m.counters["deleted_completed"], 45);
  CAF_CHECK_EQUAL(m.counters["deleted_deliveries"], 45);
  CAF_CHECK_EQUAL(m.counters["deleted_events"], 33);
}

CAF_TEST(a failing ring fails the pass after the deletes of the others) {
  store->ring_fails = true;
  store->finished[delivery_status::failed].push_back({2, 1});
  auto r = sys.spawn(retention, store, policy, manual_passes(), node_agent_actor{});
  self->send(r, wake_atom::value);
  sched.run();
  auto& m = pass_state_of(r).metrics;
  CAF_CHECK_EQUAL(m.errors, 1);
  CAF_CHECK_EQUAL(m.counters["deleted_failed"], 2);
  CAF_CHECK_EQUAL(store->asked.size(), 4u); // every final status
}

CAF_TEST(a busy ring is tried again and a completed window of 0 never turns it) {
  ring_outcome busy;
  busy.busy = true;
  store->turns.push_back(busy);
  ring_outcome behind;
  behind.behind = true;
  store->turns.push_back(behind);
  auto r = sys.spawn(retention, store, policy, manual_passes(), node_agent_actor{});
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 0);
  CAF_CHECK_EQUAL(pass_state_of(r).metrics.counters["ring_busy"], 1);
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 0);
  CAF_CHECK_EQUAL(pass_state_of(r).metrics.counters["ring_behind"], 1);
  CAF_CHECK_EQUAL(pass_state_of(r).metrics.counters["emptied_partitions"], 0);
  policy.completed_hours = 0;
  auto kept = sys.spawn(retention, store, policy, manual_passes(),
                        node_agent_actor{});
  CAF_CHECK_EQUAL(request<int64_t>(kept, once_atom::value), 0);
  CAF_CHECK_EQUAL(store->ring_asked.size(), 2u);
}

CAF_TEST(a node without the lock deletes nothing and tries again) {
  store->leads = false;
  store->finished[delivery_status::completed].push_back({5, 5});
  auto r = sys.spawn(retention, store, policy, manual_passes(), node_agent_actor{});
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 0);
  CAF_CHECK(store->asked.empty());
  store->leads = true; // the leader's session ended
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 10);
  CAF_CHECK_EQUAL(pass_state_of(r).metrics.counters["took_lead"], 1);
}

CAF_TEST(a full batch goes again at once until the backlog is gone) {
  store->finished[delivery_status::superseded].push_back({retention_batch_rows, 0});
  store->finished[delivery_status::superseded].push_back({retention_batch_rows, 0});
  store->finished[delivery_status::superseded].push_back({1, 0});
  auto r = sys.spawn(retention, store, policy, manual_passes(), node_agent_actor{});
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value),
                  2 * retention_batch_rows + 1);
  CAF_CHECK_EQUAL(pass_state_of(r).metrics.passes, 3);
}

CAF_TEST(a lost database fails the pass and the lead is taken again after) {
  store->reachable = false;
  auto r = sys.spawn(retention, store, policy, manual_passes(), node_agent_actor{});
  self->send(r, wake_atom::value);
  sched.run();
  auto& m = pass_state_of(r).metrics;
  CAF_CHECK_EQUAL(m.errors, 1);
  CAF_CHECK(!m.connected);
  CAF_CHECK_EQUAL(m.counters["took_lead"], 0);
  store->reachable = true;
  CAF_CHECK_EQUAL(request<int64_t>(r, once_atom::value), 0);
  CAF_CHECK(pass_state_of(r).metrics.connected);
  CAF_CHECK_EQUAL(pass_state_of(r).metrics.counters["took_lead"], 1);
}

CAF_TEST(a standby tries the lock at least every two seconds) {
  pass_settings slow; // --sleep 60
  slow.idle = std::chrono::seconds{60};
  store->leads = false;
  auto r = sys.spawn(retention, store, policy, slow, node_agent_actor{});
  sched.run();
  CAF_CHECK_EQUAL(pass_state_of(r).settings.idle.count(),
                  retention_max_period.count());
  stop(r);
}

CAF_TEST_FIXTURE_SCOPE_END()
