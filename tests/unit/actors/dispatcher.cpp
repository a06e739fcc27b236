#define CAF_SUITE actors.dispatcher
#define FAIL(msg) CAF_FAIL(msg)
#include "tests/unit/actors/actor_fixture.hpp"

#include "actors/dispatcher.hpp"

using namespace outbox;
using namespace outbox::testing;
using std::chrono::milliseconds;

namespace {

job_to_send job(int64_t id) {
  job_to_send j;
  j.delivery_id = id;
  j.event_id = 100 + id;
  j.job = "PublishStockJob";
  j.queue = "stock.publish";
  j.dispatch_id = "dispatch-" + std::to_string(id);
  j.event_type = "stock.changed";
  j.payload = "{}";
  j.content_type = "application/json";
  return j;
}

claim_result claimed(std::vector<int64_t> ids, int64_t expired = 0) {
  claim_result c;
  for (auto id : ids)
    c.jobs.push_back(job(id));
  c.expired = expired;
  return c;
}

struct fixture : actor_fixture {
  std::shared_ptr<fakes::delivery_store> store
    = std::make_shared<fakes::delivery_store>();
  std::shared_ptr<fakes::job_publisher> publisher
    = std::make_shared<fakes::job_publisher>();

  std::shared_ptr<handoff_box> box
    = std::make_shared<handoff_box>("stock.publish");

  pass_actor spawn_dispatcher(pass_settings s, int32_t batch = 100,
                              int32_t max_in_flight = 1000) {
    return sys.spawn(dispatcher, store, publisher, "stock.publish",
                     dispatch_limits{batch, max_in_flight}, s,
                     node_agent_actor{}, box);
  }

  // Makes the router's handing of delivery `id` as the fake store knows it.
  handed_delivery hand(int64_t id) {
    store->handed_jobs[id] = job(id);
    return {id, job(id).dispatch_id};
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(dispatcher_tests, fixture)

CAF_TEST(claimed deliveries are published as job messages) {
  store->claims.push_back(claimed({1, 2}));
  auto d = spawn_dispatcher(manual_passes());
  CAF_CHECK_EQUAL(request<int64_t>(d, once_atom::value), 2);
  CAF_REQUIRE_EQUAL(publisher->published.size(), 2u);
  auto& m = publisher->published[1];
  CAF_CHECK_EQUAL(m.routing_key, "stock.publish");
  CAF_CHECK_EQUAL(m.message_id, "2");
  CAF_CHECK_EQUAL(m.correlation_id, "dispatch-2");
  CAF_CHECK_EQUAL(m.type, "PublishStockJob");
  CAF_CHECK(store->applied.empty()); // nothing failed
}

CAF_TEST(a nack a return or a lost confirm retries that delivery alone at once) {
  store->claims.push_back(claimed({1, 2, 3, 4}));
  store->claims.back()->jobs[0].event_age_seconds = 2.5;
  publisher->statuses = {publish_status::confirmed, publish_status::nacked,
                         publish_status::returned, publish_status::lost};
  auto d = spawn_dispatcher(manual_passes());
  CAF_CHECK_EQUAL(request<int64_t>(d, once_atom::value), 1);
  CAF_REQUIRE_EQUAL(store->applied.size(), 1u);
  auto& failed = store->applied[0];
  CAF_REQUIRE_EQUAL(failed.size(), 3u);
  std::vector<std::string> reasons;
  for (auto& r : failed) {
    CAF_CHECK(r.result == outcome::retry);
    CAF_CHECK_EQUAL(r.dispatch_id, "dispatch-" + std::to_string(r.delivery_id));
    CAF_CHECK_EQUAL(r.job, "PublishStockJob");
    reasons.push_back(r.reason);
  }
  CAF_CHECK_EQUAL(failed[0].delivery_id, 2);
  CAF_CHECK_EQUAL(reasons, (std::vector<std::string>{
                             "publish nacked", "publish returned", "publish lost"}));
  auto& m = pass_state_of(d).metrics;
  CAF_CHECK_EQUAL(m.counters["nacked"], 1);
  CAF_CHECK_EQUAL(m.counters["returned"], 1);
  CAF_CHECK_EQUAL(m.counters["lost"], 1);
  // One batch sent; one job confirmed: its commit→published latency is its
  // age at the claim and then some.
  CAF_CHECK_EQUAL(m.histograms["confirm"].count, 1);
  CAF_CHECK_EQUAL(m.histograms["commit_to_published"].count, 1);
  CAF_CHECK_GREATER_OR_EQUAL(m.histograms["commit_to_published"].sum, 2.5);
  CAF_CHECK_EQUAL(m.histograms["pass"].count, 1);
}

CAF_TEST(each step is sent to the lifecycle group as a typed event) {
  auto rec = sys.spawn(lifecycle_recorder, "embedder");
  sched.run();
  auto c = claimed({1, 2});
  c.transitions.push_back({109, 9, "PublishStockJob", "stock.publish",
                           delivery_status::expired, 2, std::nullopt, std::nullopt, {}});
  store->claims.push_back(c);
  publisher->statuses = {publish_status::confirmed, publish_status::nacked};
  auto d = spawn_dispatcher(manual_passes());
  CAF_CHECK_EQUAL(request<int64_t>(d, once_atom::value), 1);
  sched.run();
  auto& evs = deref<caf::stateful_actor<lifecycle_recorder_state>>(rec).state.events;
  CAF_CHECK_EQUAL(kinds(evs), (std::vector<std::string>{
                                "expired", "published", "publish_failed",
                                "retry_scheduled"}));
  CAF_REQUIRE_EQUAL(evs.size(), 4u);
  CAF_CHECK_EQUAL(evs[0].delivery_id, 9);
  CAF_CHECK_EQUAL(evs[1].delivery_id, 1);
  CAF_CHECK_EQUAL(evs[1].event_id, 101);
  CAF_CHECK_EQUAL(evs[1].event_type, "stock.changed");
  CAF_CHECK_EQUAL(evs[1].queue, "stock.publish");
  CAF_CHECK_EQUAL(evs[2].delivery_id, 2);
  CAF_CHECK_EQUAL(evs[2].reason, "publish nacked");
  CAF_CHECK_EQUAL(evs[3].delivery_id, 2);
  CAF_CHECK_EQUAL(evs[3].next_try_ms, 1'800'000'000'000);
  stop(rec); // the group holds its subscribers until they exit
}

CAF_TEST(nothing is claimed while the broker is unreachable) {
  publisher->not_ready = make_error(errc::broker_unavailable, "connect failed");
  auto d = spawn_dispatcher(manual_passes());
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_CHECK_EQUAL(store->claim_calls, 0);
  CAF_CHECK_EQUAL(pass_state_of(d).metrics.connected, false);
  CAF_CHECK_EQUAL(pass_state_of(d).metrics.errors, 1);
}

CAF_TEST(handed deliveries are published before the claim and not claimed again) {
  box->put({hand(7), hand(8)});
  // One the sweeper took back meanwhile: its dispatch id no longer matches.
  box->put({{9, "dispatch-of-another-claim"}});
  store->claims.push_back(claimed({1}));
  auto d = spawn_dispatcher(manual_passes());
  CAF_CHECK_EQUAL(request<int64_t>(d, once_atom::value), 3);
  CAF_REQUIRE_EQUAL(publisher->published.size(), 3u);
  CAF_CHECK_EQUAL(publisher->published[0].message_id, "7");
  CAF_CHECK_EQUAL(publisher->published[1].message_id, "8");
  CAF_CHECK_EQUAL(publisher->published[2].message_id, "1");
  CAF_REQUIRE_EQUAL(store->fetched.size(), 1u);
  CAF_CHECK_EQUAL(store->fetched[0].size(), 3u);
  CAF_CHECK_EQUAL(store->claim_calls, 1);
  CAF_CHECK(box->accepting());
  CAF_CHECK_EQUAL(box->waiting(), 0u);
  CAF_CHECK_EQUAL(pass_state_of(d).metrics.counters["handed"], 2);
  // The one the read left out goes back, for the claim to settle.
  CAF_REQUIRE_EQUAL(store->released.size(), 1u);
  CAF_REQUIRE_EQUAL(store->released[0].size(), 1u);
  CAF_CHECK_EQUAL(store->released[0][0].id, 9);
}

CAF_TEST(a pass takes at most a batch of what was handed and passes again) {
  box->put({hand(1), hand(2), hand(3)});
  pass_settings s; // self-driven: a pass that leaves work runs the next at once
  s.idle = std::chrono::hours{1};
  auto d = spawn_dispatcher(s, 2);
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_CHECK_EQUAL(publisher->published.size(), 2u);
  CAF_CHECK_EQUAL(box->waiting(), 1u);
  expect((pass_atom, uint64_t), from(d).to(d)); // at once, for the rest
  CAF_CHECK_EQUAL(publisher->published.size(), 3u);
  CAF_CHECK_EQUAL(box->waiting(), 0u);
  stop(d);
}

CAF_TEST(no credit while ready deliveries wait so that new ones queue behind) {
  auto full = claimed({1, 2}); // a full batch of 2: more are waiting
  full.room = 50;
  store->claims.push_back(full);
  auto d = spawn_dispatcher(manual_passes(), 2);
  CAF_CHECK_EQUAL(request<int64_t>(d, once_atom::value), 2);
  CAF_CHECK_EQUAL(box->credit(), 0);
  auto rest = claimed({3}); // the backlog is gone
  rest.room = 48;
  store->claims.push_back(rest);
  CAF_CHECK_EQUAL(request<int64_t>(d, once_atom::value), 1);
  CAF_CHECK_EQUAL(box->credit(), 47);
  auto uncounted = claimed({}); // a claim without a count gives none
  store->claims.push_back(uncounted);
  CAF_CHECK_EQUAL(request<int64_t>(d, once_atom::value), 0);
  CAF_CHECK_EQUAL(box->credit(), 0);
}

CAF_TEST(a stopping dispatcher closes its box and gives back what it holds) {
  auto d = spawn_dispatcher(manual_passes());
  box->set_accepting(true);
  box->set_credit(10);
  box->put({hand(5)});
  self->send_exit(d, caf::exit_reason::user_shutdown);
  sched.run();
  CAF_CHECK(!box->accepting());
  CAF_CHECK_EQUAL(box->offer().room, 0);
  CAF_REQUIRE_EQUAL(store->released.size(), 1u);
  CAF_CHECK_EQUAL(store->released[0][0].id, 5);
  // What a router hands over after that is refused, not lost in the box.
  CAF_CHECK(!box->put({hand(6)}));
  CAF_CHECK_EQUAL(box->waiting(), 0u);
  box->set_accepting(true);
  CAF_CHECK(!box->accepting());
}

CAF_TEST(each claim gives the router the room it leaves as credit) {
  auto c = claimed({1, 2});
  c.room = 5;
  store->claims.push_back(c);
  auto d = spawn_dispatcher(manual_passes());
  CAF_CHECK_EQUAL(request<int64_t>(d, once_atom::value), 2);
  CAF_CHECK_EQUAL(box->credit(), 3);
  CAF_CHECK_EQUAL(box->offer().room, 3);
  auto none = claimed({});
  none.room = 0;
  store->claims.push_back(none);
  CAF_CHECK_EQUAL(request<int64_t>(d, once_atom::value), 0);
  CAF_CHECK_EQUAL(box->offer().room, 0);
}

CAF_TEST(a handed delivery the broker refuses takes the retry path alone) {
  box->put({hand(7), hand(8)});
  publisher->statuses = {publish_status::confirmed, publish_status::nacked};
  auto d = spawn_dispatcher(manual_passes());
  CAF_CHECK_EQUAL(request<int64_t>(d, once_atom::value), 1);
  CAF_REQUIRE_EQUAL(store->applied.size(), 1u);
  CAF_REQUIRE_EQUAL(store->applied[0].size(), 1u);
  CAF_CHECK_EQUAL(store->applied[0][0].delivery_id, 8);
  CAF_CHECK_EQUAL(store->applied[0][0].dispatch_id, "dispatch-8");
  CAF_CHECK(store->applied[0][0].result == outcome::retry);
}

CAF_TEST(while the broker is unreachable handed deliveries go back to pending) {
  box->set_accepting(true);
  box->put({hand(7)});
  publisher->not_ready = make_error(errc::broker_unavailable, "connect failed");
  auto d = spawn_dispatcher(manual_passes());
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_CHECK(!box->accepting());
  CAF_CHECK_EQUAL(box->waiting(), 0u);
  CAF_REQUIRE_EQUAL(store->released.size(), 1u);
  CAF_CHECK_EQUAL(store->released[0][0].id, 7);
  CAF_CHECK(store->fetched.empty());
  CAF_CHECK(publisher->published.empty());
}

CAF_TEST(handed deliveries whose jobs cannot be read go back to the claim) {
  box->put({hand(7)});
  store->fetch_error = make_error(errc::database_error, "fetch_handed failed (SQLSTATE 22P02)");
  auto d = spawn_dispatcher(manual_passes());
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_REQUIRE_EQUAL(store->released.size(), 1u);
  CAF_CHECK_EQUAL(store->released[0][0].id, 7);
  CAF_CHECK(publisher->published.empty());
  CAF_CHECK_EQUAL(pass_state_of(d).metrics.errors, 1);
}

// While the broker is down the router keeps waking the dispatcher, once per
// routed event: only the backoff may time the next attempt.
CAF_TEST(wake-ups while the broker is down wait for the backoff) {
  pass_settings s;
  publisher->not_ready = make_error(errc::broker_unavailable, "connect failed");
  auto d = spawn_dispatcher(s);
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_CHECK_EQUAL(publisher->ready_calls, 1);
  for (int i = 0; i < 100; ++i)
    self->send(d, wake_atom::value);
  sched.run();
  CAF_CHECK_EQUAL(publisher->ready_calls, 1);
  CAF_CHECK_EQUAL(advance_time(milliseconds{199}), 0u);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  sched.run();
  CAF_CHECK_EQUAL(publisher->ready_calls, 2); // the second failure: 400 ms
  self->send(d, wake_atom::value);
  sched.run();
  CAF_CHECK_EQUAL(publisher->ready_calls, 2);
  publisher->not_ready = caf::none;
  CAF_CHECK_EQUAL(advance_time(milliseconds{399}), 0u);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  sched.run();
  CAF_CHECK_EQUAL(publisher->ready_calls, 3);
  CAF_CHECK_EQUAL(store->claim_calls, 1);
  CAF_CHECK_EQUAL(pass_state_of(d).metrics.errors, 2);
  stop(d);
}

CAF_TEST(the next pass is timed to the next available delivery) {
  pass_settings s;
  s.idle = std::chrono::seconds{10};
  store->next_ready = 2.5; // a retry becomes ready in 2.5 s
  auto d = spawn_dispatcher(s);
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_CHECK_EQUAL(advance_time(milliseconds{2499}), 0u);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  expect((pass_atom, uint64_t), from(d).to(d).with(_, 2u));
  CAF_CHECK_EQUAL(store->claim_calls, 2);
  store->next_ready = std::nullopt; // nothing pending: the idle sleep
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_CHECK_EQUAL(advance_time(milliseconds{9999}), 1u); // token 2: stale
  sched.run();
  CAF_CHECK_EQUAL(store->claim_calls, 3);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  sched.run();
  CAF_CHECK_EQUAL(store->claim_calls, 4);
  stop(d);
}

CAF_TEST(expired deliveries count toward a full batch) {
  pass_settings s;
  store->claims.push_back(claimed({1}, 1)); // batch of 2: full
  auto d = spawn_dispatcher(s, 2);
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  expect((pass_atom, uint64_t), from(d).to(d));
  expect((pass_atom, uint64_t), from(d).to(d).with(_, 2u)); // at once
  CAF_CHECK_EQUAL(pass_state_of(d).metrics.counters["expired"], 1);
  stop(d);
}

CAF_TEST(at the in flight limit the next pass comes soon and wake-ups wait) {
  pass_settings s;
  s.idle = std::chrono::seconds{10};
  auto c = claimed({1, 2});
  c.room = 2;
  c.at_limit = true; // two more were ready
  store->claims.push_back(c);
  auto d = spawn_dispatcher(s, 100, 2);
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_REQUIRE_EQUAL(store->requests.size(), 1u);
  CAF_CHECK_EQUAL(store->requests[0].max_in_flight, 2);
  CAF_CHECK_EQUAL(publisher->published.size(), 2u);
  // A wake-up (the router's, for new deliveries) starts no pass meanwhile:
  // there is no room for them yet.
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  sched.run();
  CAF_CHECK_EQUAL(store->claim_calls, 1);
  // Neither at once nor after the idle sleep: soon, for the room that
  // results free meanwhile.
  CAF_CHECK_EQUAL(advance_time(milliseconds{99}), 0u);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  expect((pass_atom, uint64_t), from(d).to(d).with(_, 2u));
  CAF_CHECK_EQUAL(store->claim_calls, 2);
  stop(d);
}

// A send the broker held while it blocked publishers costs its delivery
// no attempt: back to pending, not down the retry path. One that could
// not be written even over a new connection (unsent) takes the retry path,
// so that a message that can never be written does not come back for ever.
CAF_TEST(blocked sends go back to pending without an attempt) {
  store->claims.push_back(claimed({1, 2, 3}));
  publisher->statuses = {publish_status::unsent, publish_status::blocked,
                         publish_status::lost};
  auto d = spawn_dispatcher(manual_passes());
  request<int64_t>(d, once_atom::value);
  CAF_REQUIRE_EQUAL(store->released.size(), 1u);
  CAF_REQUIRE_EQUAL(store->released[0].size(), 1u);
  CAF_CHECK_EQUAL(store->released[0][0].id, 2);
  CAF_CHECK_EQUAL(store->released[0][0].dispatch_id, "dispatch-2");
  CAF_REQUIRE_EQUAL(store->applied.size(), 1u);
  CAF_REQUIRE_EQUAL(store->applied[0].size(), 2u);
  CAF_CHECK_EQUAL(store->applied[0][0].delivery_id, 1); // unsent: an attempt
  CAF_CHECK_EQUAL(store->applied[0][1].delivery_id, 3); // lost: an attempt
  auto& m = pass_state_of(d).metrics;
  CAF_CHECK_EQUAL(m.counters["unsent"], 1);
  CAF_CHECK_EQUAL(m.counters["blocked"], 1);
  stop(d);
}

// While the broker blocks publishers (a resource alarm), nothing is
// claimed and what the router handed over goes back; the pass is no
// failure and looks again soon.
CAF_TEST(a broker that blocks publishers holds claims until it unblocks) {
  publisher->is_blocked = true;
  box->set_accepting(true);
  box->set_credit(5);
  box->put({hand(7)});
  pass_settings s;
  s.idle = std::chrono::seconds{10};
  auto d = spawn_dispatcher(s);
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_CHECK_EQUAL(store->claim_calls, 0);
  CAF_CHECK(!box->accepting());
  CAF_REQUIRE_EQUAL(store->released.size(), 1u);
  CAF_CHECK_EQUAL(store->released[0].at(0).id, 7);
  auto& m = pass_state_of(d).metrics;
  CAF_CHECK_EQUAL(m.gauges["broker_blocked"], 1);
  CAF_CHECK_EQUAL(m.errors, 0);
  // Unblocked: the next pass, soon, claims again.
  publisher->is_blocked = false;
  CAF_CHECK_EQUAL(advance_time(milliseconds{250}), 1u);
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_CHECK_EQUAL(store->claim_calls, 1);
  CAF_CHECK_EQUAL(pass_state_of(d).metrics.gauges["broker_blocked"], 0);
  stop(d);
}

// A queue an operator paused (outboxctl pause): the claim reads the pause
// and takes nothing; the router gets no credit, what it handed before it
// saw the pause goes back to pending unsent, wake-ups start no pass, and
// the next look comes within a second, or when the pause ends by itself.
CAF_TEST(a paused queue sends nothing and gives back what was handed) {
  box->set_accepting(true);
  box->set_credit(5);
  box->put({hand(7)});
  pass_settings s;
  s.idle = std::chrono::seconds{10};
  auto paused = claimed({});
  paused.room = 0;
  paused.paused = true;
  store->claims.push_back(paused);
  auto d = spawn_dispatcher(s);
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  expect((pass_atom, uint64_t), from(d).to(d));
  // The handed one went out in this pass: it was handed before the claim
  // saw the pause. From now on the router hands nothing.
  CAF_CHECK_EQUAL(publisher->published.size(), 1u);
  CAF_CHECK_EQUAL(box->credit(), 0);
  CAF_CHECK_EQUAL(pass_state_of(d).metrics.gauges["paused"], 1);
  // Handed meanwhile (credit the router had already taken): back to pending.
  box->set_credit(1);
  box->put({hand(8)});
  self->send(d, wake_atom::value);
  expect((wake_atom), from(self).to(d));
  sched.run();
  CAF_CHECK_EQUAL(store->claim_calls, 1); // the wake-up waits
  auto ends_soon = paused;
  ends_soon.pause_ends_in_seconds = 0.3;
  store->claims.push_back(ends_soon);
  CAF_CHECK_EQUAL(advance_time(milliseconds{999}), 0u);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_CHECK_EQUAL(store->claim_calls, 2);
  CAF_CHECK_EQUAL(publisher->published.size(), 1u);
  CAF_REQUIRE_EQUAL(store->released.size(), 1u);
  CAF_CHECK_EQUAL(store->released[0].at(0).id, 8);
  CAF_CHECK_EQUAL(box->credit(), 0);
  // The pause ends in 0.3 s: the next look comes then, not after a second.
  auto resumed = claimed({1});
  resumed.room = 10;
  store->claims.push_back(resumed);
  CAF_CHECK_EQUAL(advance_time(milliseconds{300}), 0u);
  CAF_CHECK_EQUAL(advance_time(milliseconds{1}), 1u);
  expect((pass_atom, uint64_t), from(d).to(d));
  CAF_CHECK_EQUAL(publisher->published.size(), 2u);
  CAF_CHECK_EQUAL(pass_state_of(d).metrics.gauges["paused"], 0);
  CAF_CHECK_EQUAL(box->credit(), 9);
  stop(d);
}

// Results that wait unread show in the dispatcher's gauges: behind once
// their wait at the workers' measured pace passes 5 s, or when nothing
// finishes at all.
CAF_TEST(results waiting unread show as a result handling that falls behind) {
  publisher->waiting_results = 40;
  auto d = spawn_dispatcher(manual_passes());
  request<int64_t>(d, once_atom::value);
  auto& gauges = pass_state_of(d).metrics.gauges;
  CAF_CHECK_EQUAL(gauges["results_waiting"], 40);
  CAF_CHECK_EQUAL(gauges["results_behind"], 0); // no pace measured yet
  stop(d);
}

// The window (core/domain/in_flight_window.hpp) is the claim's limit; each
// claim names the cohort the one before started, and what the workers
// finished sets the next limit.
CAF_TEST(the claim asks for the in flight window and the window follows the workers) {
  auto first = claimed({1, 2});
  first.window = window_sample{1'000'000, 0, 0, 10};
  auto second = claimed({});
  // A second later both are still out: nothing finished.
  second.window = window_sample{2'000'000, 2, 2, 10};
  auto third = claimed({});
  // 100 ms later both left: at least 20 a second.
  third.window = window_sample{2'100'000, 0, 0, 10};
  for (auto& c : {first, second, third})
    store->claims.push_back(c);
  auto d = spawn_dispatcher(manual_passes(), 50, 1000);
  for (int i = 0; i < 3; ++i)
    request<int64_t>(d, once_atom::value);
  CAF_REQUIRE_EQUAL(store->requests.size(), 3u);
  CAF_CHECK_EQUAL(store->requests[0].max_in_flight, 50); // a batch to start
  CAF_CHECK(!store->requests[0].cohort_start_us);
  CAF_CHECK_EQUAL(store->requests[1].cohort_start_us.value_or(0), 1'000'000);
  CAF_CHECK_EQUAL(store->requests[2].max_in_flight, 1); // stalled: the floor
  CAF_CHECK_EQUAL(store->requests[2].cohort_start_us.value_or(0), 2'000'000);
  auto& gauges = pass_state_of(d).metrics.gauges;
  // 2 in 100 ms: 20 a second, 10 s timeout, half of it: 100; but only 2
  // were out, so no more than twice that, and never below a batch: 50.
  CAF_CHECK_EQUAL(gauges["in_flight_window"], 50);
  CAF_CHECK_EQUAL(gauges["completion_rate"], 20);
  stop(d);
}

// The claim cursor is the dispatcher's: each claim starts where the one
// before said, and after a failed claim from the beginning again.
CAF_TEST(each claim starts where the previous one left off or over after a failure) {
  pass_settings s;
  auto first = claimed({1});
  first.resume = claim_cursor{"2026-12-01 10:00:00+00", 1};
  store->claims.push_back(first);
  store->claims.push_back(make_error(errc::database_unavailable, "gone"));
  store->claims.push_back(claimed({2}));
  auto d = spawn_dispatcher(s);
  self->send(d, wake_atom::value);
  sched.run();
  self->send(d, wake_atom::value);
  sched.run();
  CAF_CHECK_EQUAL(advance_time(milliseconds{200}), 1u); // the backoff
  sched.run();
  CAF_REQUIRE_EQUAL(store->requests.size(), 3u);
  CAF_CHECK(store->requests[0].from.at_start());
  CAF_CHECK_EQUAL(store->requests[0].queue, "stock.publish");
  CAF_CHECK_EQUAL(store->requests[1].from.available_at, "2026-12-01 10:00:00+00");
  CAF_CHECK_EQUAL(store->requests[1].from.id, 1);
  CAF_CHECK(store->requests[2].from.at_start());
  stop(d);
}

CAF_TEST_FIXTURE_SCOPE_END()
