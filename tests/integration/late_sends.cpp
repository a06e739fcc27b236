// Late sends of ordered keys with the relay and the C++ worker library on
// real servers: a job is not started after its outboxExpiresAt, and the
// key's next event does not start while a timed-out head still runs
// (docs/ordering.md "A late send"; the database's side of it:
// integration.ordering_late).
#define CAF_SUITE integration.late_sends
#include <caf/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "core/amqp/wire.hpp"
#include "core/base/timestamp.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/running_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

using steady = std::chrono::steady_clock;

// One run of a handler: its delivery and when it started and ended.
struct run {
  int64_t delivery_id = 0;
  int64_t event_id = 0;
  steady::time_point started, ended;
};

// The runs the handlers made, across the workers' threads.
struct runs {
  std::mutex mtx;
  std::vector<run> all;

  void add(run r) {
    std::lock_guard<std::mutex> guard{mtx};
    all.push_back(r);
  }
  std::vector<run> seen() {
    std::lock_guard<std::mutex> guard{mtx};
    return all;
  }
};

// A handler that sleeps `slow` for the payloads {"slow":true}, and journals.
job_handler journaled(runs& into, std::chrono::milliseconds slow) {
  return [&into, slow](const job_context& ctx) {
    run r{ctx.delivery_id, ctx.event_id, steady::now(), {}};
    if (ctx.payload_json.find("\"slow\":true") != std::string::npos)
      std::this_thread::sleep_for(slow);
    r.ended = steady::now();
    into.add(r);
  };
}

job_to_send job_for(const std::string& queue, int64_t id, std::string payload) {
  job_to_send j;
  j.delivery_id = id;
  j.event_id = id;
  j.job = "J";
  j.queue = queue;
  j.dispatch_id = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6" + std::to_string(id % 10);
  j.event_type = "e";
  j.payload = std::move(payload);
  j.content_type = "application/json";
  return j;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(late_sends_tests, cluster_fixture)

// The hole a prefetch leaves: a job message waits in the worker's buffer
// behind a slow job and is taken past its send's timeout. The worker
// answers it `retry` unrun (the relay retries it in the key's order, or
// takes it as the end of the late send).
CAF_TEST(a job reached after its expiry is answered retry without running) {
  auto q = queue("expiry");
  auto amqp = amqp_client::connect(amqp_url(), "test relay");
  CAF_REQUIRE(amqp);
  CAF_REQUIRE(!(*amqp)->declare_queue(q));
  CAF_REQUIRE(!(*amqp)->declare_queue(results_queue(q)));
  auto slow = job_for(q, 1, R"({"slow":true})");
  auto expiring = job_for(q, 2, "{}");
  // Reached only after the slow job's second: past this.
  expiring.start_by = clock_type::now() + std::chrono::milliseconds{300};
  auto in_time = job_for(q, 3, "{}");
  in_time.start_by = clock_type::now() + std::chrono::minutes{5};
  for (auto st : (*amqp)->publish_batch(
         {job_message(slow), job_message(expiring), job_message(in_time)},
         std::chrono::seconds{5}))
    CAF_REQUIRE(st == publish_status::confirmed);
  runs journal;
  std::vector<send_result> results;
  {
    running_worker w{q, {{"J", journaled(journal, std::chrono::seconds{1})}}};
    CAF_REQUIRE(!(*amqp)->consume(results_queue(q), 100));
    auto deadline = steady::now() + std::chrono::seconds{20};
    while (results.size() < 3 && steady::now() < deadline) {
      auto m = (*amqp)->next_message(std::chrono::milliseconds{100});
      CAF_REQUIRE(m);
      if (*m) {
        for (auto& r : read_result_message((*m)->body).results)
          results.push_back(r);
        CAF_CHECK(!(*amqp)->ack((*m)->delivery_tag));
      }
    }
    CAF_CHECK_EQUAL(w.w.counters().expired, 1);
    CAF_CHECK_EQUAL(w.w.counters().completed, 2);
  }
  CAF_REQUIRE_EQUAL(results.size(), 3u);
  std::map<int64_t, send_result> by_id;
  for (auto& r : results)
    by_id[r.delivery_id] = r;
  CAF_CHECK(by_id.at(1).result == outcome::completed);
  CAF_CHECK(by_id.at(2).result == outcome::retry);
  CAF_CHECK_EQUAL(by_id.at(2).reason,
                  "the job message expired before a worker started it");
  CAF_CHECK(by_id.at(3).result == outcome::completed);
  std::set<int64_t> ran;
  for (auto& r : journal.seen())
    ran.insert(r.delivery_id);
  CAF_CHECK_EQUAL(ran, (std::set<int64_t>{1, 3}));
}

// Two workers on an ordered queue; the head's run outlasts its delivery
// timeout, which fails it for good (no retries, onFailure continue).
// Before late sends, the sweep let the next event go and the idle worker
// ran it beside the head. Now it starts only once the head's late result
// came back. The head's run ends when the test has seen the head failed
// (the fault in effect), not after a fixed time; the late send holds the
// key for one more timeout (5 s), far more than that takes.
CAF_TEST(the next event of a key does not start while a timed out head runs) {
  auto q = queue("late_key");
  auto r = make_route("e", "J", q, {}, 5);
  r.rules.ordering = key_ordering::key;
  // Both events must run: the waiting one must not replace the head.
  r.rules.merge = merge_mode::none;
  running_node node{make_config({r})};
  runs journal;
  std::atomic<bool> head_failed{false};
  job_handler handler = [&](const job_context& ctx) {
    run one{ctx.delivery_id, ctx.event_id, steady::now(), {}};
    if (ctx.payload_json.find("\"slow\":true") != std::string::npos) {
      auto deadline = steady::now() + std::chrono::seconds{120};
      while (!head_failed && steady::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    one.ended = steady::now();
    journal.add(one);
  };
  running_worker a{q, {{"J", handler}}};
  running_worker b{q, {{"J", handler}}};
  auto head = publish("e", R"({"slow":true})", "K");
  auto next = publish("e", "{}", "K");
  CAF_REQUIRE(wait_until([&] { return count_status("failed") == 1; },
                         std::chrono::seconds{60}));
  // The head still runs; the next event has not run beside it.
  CAF_CHECK(journal.seen().empty());
  head_failed = true;
  CAF_REQUIRE(wait_until([&] { return journal.seen().size() == 2; },
                         std::chrono::seconds{30}));
  auto seen = journal.seen();
  std::sort(seen.begin(), seen.end(),
            [](const run& x, const run& y) { return x.started < y.started; });
  CAF_REQUIRE_EQUAL(seen[0].event_id, head);
  CAF_REQUIRE_EQUAL(seen[1].event_id, next);
  CAF_CHECK(seen[1].started >= seen[0].ended);
  CAF_REQUIRE(wait_until([&] {
    return count_status("failed") == 1 && count_status("completed") == 1;
  }));
  auto failed = must_exec(db, "SELECT event_id, last_error FROM "
                                + all_deliveries(names)
                                + " d WHERE status = 'failed'");
  CAF_REQUIRE_EQUAL(failed.size(), 1);
  CAF_CHECK_EQUAL(failed.int64(0, 0), head);
  CAF_CHECK_EQUAL(failed.text(0, 1), "no result before the delivery timeout");
}

CAF_TEST_FIXTURE_SCOPE_END()
