#define CAF_SUITE integration.worker
#include <caf/test/unit_test.hpp>

#include "core/amqp/wire.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/running_worker.hpp"
#include "worker/worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Records what the handlers saw, across the worker's thread.
struct journal {
  std::mutex mtx;
  std::vector<job_context> seen;

  void add(const job_context& ctx) {
    std::lock_guard<std::mutex> guard{mtx};
    seen.push_back(ctx);
  }
  std::vector<job_context> all() {
    std::lock_guard<std::mutex> guard{mtx};
    return seen;
  }
};

// Hands each message that `c` receives to `take` until `done()`, or for
// at most 10 s.
template <class Done, class Take>
void read_messages(amqp_client& c, Done done, Take take) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    auto m = c.next_message(std::chrono::milliseconds{100});
    CAF_REQUIRE(m);
    if (*m)
      take(**m);
  }
}

struct fixture : cluster_fixture {
  journal log;

  std::string last_error_of(int64_t delivery) {
    auto rows = must_exec(db, "SELECT COALESCE(last_error, '') FROM "
                                + all_deliveries(names) + " d WHERE id = $1",
                          {std::to_string(delivery)});
    return rows.text(0, 0);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(worker_tests, fixture)

CAF_TEST(success closes only its own delivery) {
  auto q = queue("own");
  running_node node{make_config({make_route("e", "J", q, {60})})};
  running_worker w{q, {{"J", [&](const job_context& ctx) {
                          log.add(ctx);
                          if (ctx.payload_json == R"({"n":2})")
                            throw retryable_error("not yet");
                        }}}};
  publish("e", R"({"n":1})");
  publish("e", R"({"n":2})");
  CAF_REQUIRE(wait_until([&] { return log.all().size() == 2; }));
  CAF_REQUIRE(wait_until([&] {
    return count_status("completed") == 1 && count_status("pending") == 1;
  }));
  auto d = deliveries_of("J");
  CAF_CHECK_EQUAL(d.at(0).second, "completed");
  CAF_CHECK_EQUAL(d.at(1).second, "pending"); // retried in 60 s
  CAF_CHECK_EQUAL(last_error_of(d.at(1).first), "not yet");
}

CAF_TEST(a retryable error follows the delays and the handler sees the last attempt) {
  auto q = queue("retry");
  running_node node{make_config({make_route("e", "J", q, {1, 1})})};
  running_worker w{q, {{"J", [&](const job_context& ctx) {
                          log.add(ctx);
                          throw retryable_error("try later");
                        }}}};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("failed") == 1; }));
  auto seen = log.all();
  CAF_REQUIRE_EQUAL(seen.size(), 3u);
  CAF_CHECK_EQUAL(seen[0].last_attempt, false);
  CAF_CHECK_EQUAL(seen[1].last_attempt, false);
  CAF_CHECK_EQUAL(seen[2].last_attempt, true);
  CAF_CHECK_EQUAL(seen[0].delivery_id, seen[2].delivery_id);
  CAF_CHECK_NOT_EQUAL(seen[0].dispatch_id, seen[2].dispatch_id);
}

CAF_TEST(any other exception fails at once with a safe reason) {
  auto q = queue("throw");
  running_node node{make_config({make_route("e", "J", q, {1, 1})})};
  running_worker w{q, {{"J", [&](const job_context& ctx) {
                          log.add(ctx);
                          throw std::runtime_error("secret=hunter2");
                        }}}};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("failed") == 1; }));
  CAF_CHECK_EQUAL(log.all().size(), 1u);
  auto d = deliveries_of("J");
  CAF_CHECK_EQUAL(last_error_of(d.at(0).first), "handler threw std::runtime_error");
}

CAF_TEST(a result arriving after a newer dispatch changes nothing) {
  auto q = queue("late");
  // A 1 s delivery timeout; the first run of the job takes 2.5 s, so its
  // result comes back after the sweeper sent the delivery again.
  running_node node{make_config({make_route("e", "J", q, {1, 1}, 1)})};
  constexpr auto late_first_run = std::chrono::milliseconds{2500}; // the scenario
  running_worker w{q, {{"J", [&](const job_context& ctx) {
                          log.add(ctx);
                          if (log.all().size() == 1)
                            std::this_thread::sleep_for(late_first_run);
                          else
                            throw retryable_error("second try fails");
                        }}}};
  publish("e", "{}");
  // The first (late) result says completed: it must not close a delivery
  // whose newer sends failed.
  CAF_REQUIRE(wait_until([&] { return count_status("failed") == 1; }));
  CAF_CHECK_EQUAL(count_status("completed"), 0);
  CAF_CHECK(log.all().size() >= 2u);
  CAF_REQUIRE(wait_until([&] {
    return node.counters_of("results " + q)["stale"] >= 1;
  }, std::chrono::seconds{5}));
}

CAF_TEST(malformed job messages never crash the worker) {
  auto q = queue("strict");
  running_node node{make_config({make_route("e", "J", q, {60})})};
  running_worker w{q, {{"J", [&](const job_context& ctx) { log.add(ctx); }}}};
  auto amqp = amqp_client::connect(amqp_url(), "test producer");
  CAF_REQUIRE(amqp);
  CAF_REQUIRE(!(*amqp)->declare_queue(q));
  auto send = [&](std::string body) {
    outgoing_message m;
    m.routing_key = q;
    m.body = std::move(body);
    CAF_CHECK((*amqp)->publish_batch({m}, std::chrono::seconds{5}).at(0)
              == publish_status::confirmed);
  };
  send("\xff not json");
  send(R"({"job": "J"})");
  // Attributable (ids readable) but no payload: answered `failed`; the
  // relay knows no such delivery and counts it.
  send(R"({"job":"J","outboxDeliveryId":"999999","outboxDispatchId":)"
       R"("0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c"})");
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; }));
  CAF_CHECK_EQUAL(log.all().size(), 1u);
  CAF_CHECK_EQUAL(w.w.counters().malformed, 3);
  CAF_REQUIRE(wait_until([&] {
    return node.counters_of("results " + q)["unknown_delivery"] == 1;
  }, std::chrono::seconds{5}));
}

CAF_TEST(an unknown job is failed and a missing handler stops the start) {
  auto q = queue("unknown");
  auto cfg = make_config({make_route("e", "J", q, {60}),
                          make_route("e", "K", q, {60}),
                          make_route("e", "L", queue("elsewhere"), {60})});
  outbox::worker check{worker_options{amqp_url(), q, 5}};
  check.handle("J", [](const job_context&) {});
  auto err = check.check_routes(cfg);
  CAF_CHECK_EQUAL(render(err),
                  "config_invalid: queue \"" + q
                    + "\": no handler for the routed job(s) K");
  check.handle("K", [](const job_context&) {});
  CAF_CHECK(!check.check_routes(cfg));
  running_node node{cfg};
  running_worker w{q, {{"J", [&](const job_context& ctx) { log.add(ctx); }}}};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] {
    return count_status("completed") == 1 && count_status("failed") == 1;
  }));
  auto k = deliveries_of("K");
  CAF_CHECK_EQUAL(last_error_of(k.at(0).first),
                  "no handler for this job in the worker");
}

CAF_TEST(the worker sends the results of a batch of jobs together) {
  auto q = queue("together");
  auto amqp = amqp_client::connect(amqp_url(), "test relay");
  CAF_REQUIRE(amqp);
  CAF_REQUIRE(!(*amqp)->declare_queue(q));
  CAF_REQUIRE(!(*amqp)->declare_queue(results_queue(q)));
  std::vector<outgoing_message> jobs;
  for (int64_t id = 1; id <= 20; ++id) {
    job_to_send j;
    j.delivery_id = id;
    j.event_id = id;
    j.job = "J";
    j.queue = q;
    j.dispatch_id = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c";
    j.event_type = "e";
    j.payload = "{}";
    j.content_type = "application/json";
    jobs.push_back(job_message(j));
  }
  for (auto st : (*amqp)->publish_batch(jobs, std::chrono::seconds{5}))
    CAF_REQUIRE(st == publish_status::confirmed);
  // The jobs wait in the queue, so the worker takes them by its prefetch.
  running_worker w{q, {{"J", [&](const job_context& ctx) { log.add(ctx); }}}};
  CAF_REQUIRE(!(*amqp)->consume(results_queue(q), 100));
  std::vector<int64_t> ids;
  int messages = 0;
  read_messages(**amqp, [&] { return ids.size() >= 20; },
                [&](const incoming_message& m) {
                  ++messages;
                  auto content = read_result_message(m.body);
                  CAF_CHECK(content.refused.empty());
                  for (auto& r : content.results) {
                    CAF_CHECK(r.result == outcome::completed);
                    ids.push_back(r.delivery_id);
                  }
                });
  CAF_REQUIRE_EQUAL(ids.size(), 20u);
  for (int64_t i = 0; i < 20; ++i)
    CAF_CHECK_EQUAL(ids[static_cast<size_t>(i)], i + 1);
  // One message per job would be 20; the prefetch of 5 allows 4.
  CAF_CHECK_LESS(messages, 20);
  CAF_MESSAGE("20 results came in " << messages << " messages");
}

CAF_TEST(a result message with many results applies each but its bad entries) {
  auto q = queue("many");
  running_node node{make_config({make_route("e", "J", q, {60})})};
  for (int i = 0; i < 3; ++i)
    publish("e", "{}");
  // The test plays the worker, to write the result messages by hand.
  auto amqp = amqp_client::connect(amqp_url(), "test worker");
  CAF_REQUIRE(amqp);
  CAF_REQUIRE(!(*amqp)->declare_queue(q));
  CAF_REQUIRE(!(*amqp)->consume(q, 10));
  std::vector<send_result> rs;
  uint64_t last_tag = 0;
  read_messages(**amqp, [&] { return rs.size() >= 3; },
                [&](const incoming_message& m) {
                  auto job = parse_job_message(m.body);
                  CAF_REQUIRE(job);
                  send_result r;
                  r.delivery_id = job->delivery_id;
                  r.dispatch_id = job->dispatch_id;
                  r.job = job->job;
                  rs.push_back(r);
                  last_tag = m.delivery_tag;
                });
  CAF_REQUIRE_EQUAL(rs.size(), 3u);
  auto not_utf8 = rs[2];
  not_utf8.result = outcome::failed;
  not_utf8.reason = "bad \xff byte";
  int sent = 0;
  auto message = [&](std::string body) {
    outgoing_message m;
    m.routing_key = results_queue(q);
    m.message_id = "m" + std::to_string(++sent);
    m.body = std::move(body);
    return m;
  };
  // Sent together, so the relay takes them in one batch: a bad byte or a
  // NUL that reached the database would fail the good results with it, on
  // every try.
  auto sts = (*amqp)->publish_batch(
    {message("[" + result_message_body(rs[0]) + R"(,{"outboxDeliveryId":"1"},)"
             + result_message_body(rs[1]) + "]"),
     message(result_message_body(not_utf8)),
     message(R"({"outboxDeliveryId":")" + std::to_string(rs[2].delivery_id)
             + R"(","outboxDispatchId":")" + rs[2].dispatch_id
             + R"(","job":"J","outcome":"failed","reason":"a\u0000b"})"),
     message(result_message_body(rs[2]))},
    std::chrono::seconds{5});
  for (auto st : sts)
    CAF_REQUIRE(st == publish_status::confirmed);
  (*amqp)->ack(last_tag, /*multiple*/ true);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 3; }));
  CAF_REQUIRE(wait_until([&] {
    return node.counters_of("results " + q)["malformed"] == 3;
  }, std::chrono::seconds{5}));
}

// A message nested a million deep crashed the worker in the parser's
// recursion; the broker then handed it to the next worker, and so on. Now
// it is refused unread and settled once: answered `failed` when its
// properties name a delivery, acked either way; the worker goes on.
CAF_TEST(a job message nested a million deep is settled once) {
  auto q = queue("poison");
  auto amqp = amqp_client::connect(amqp_url(), "test relay");
  CAF_REQUIRE(amqp);
  CAF_REQUIRE(!(*amqp)->declare_queue(q));
  CAF_REQUIRE(!(*amqp)->declare_queue(results_queue(q)));
  std::string dispatch = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c";
  outgoing_message named;
  named.routing_key = q;
  named.body = std::string(1'000'000, '[');
  named.message_id = "42";
  named.correlation_id = dispatch;
  named.type = "J";
  auto anonymous = named;
  anonymous.message_id = "not an id";
  job_to_send good;
  good.delivery_id = 7;
  good.event_id = 7;
  good.job = "J";
  good.queue = q;
  good.dispatch_id = dispatch;
  good.event_type = "e";
  good.payload = "{}";
  good.content_type = "application/json";
  for (auto st : (*amqp)->publish_batch({named, anonymous, job_message(good)},
                                        std::chrono::seconds{5}))
    CAF_REQUIRE(st == publish_status::confirmed);
  std::vector<send_result> results;
  {
    running_worker w{q, {{"J", [&](const job_context& ctx) { log.add(ctx); }}}};
    CAF_REQUIRE(!(*amqp)->consume(results_queue(q), 100));
    read_messages(**amqp, [&] { return results.size() >= 2; },
                  [&](const incoming_message& m) {
                    for (auto& r : read_result_message(m.body).results)
                      results.push_back(r);
                    CAF_CHECK(!(*amqp)->ack(m.delivery_tag));
                  });
    CAF_REQUIRE(wait_until([&] { return w.w.counters().malformed == 2; },
                           std::chrono::seconds{5}));
    CAF_CHECK_EQUAL(w.w.counters().completed, 1);
  }
  CAF_REQUIRE_EQUAL(results.size(), 2u);
  CAF_CHECK_EQUAL(results[0].delivery_id, 42);
  CAF_CHECK(results[0].result == outcome::failed);
  CAF_CHECK_EQUAL(results[0].reason, "job message: nested deeper than 65 levels");
  CAF_CHECK_EQUAL(results[1].delivery_id, 7);
  CAF_CHECK(results[1].result == outcome::completed);
  CAF_CHECK_EQUAL(log.all().size(), 1u);
  // Nothing is left to hand out again: all three were acked.
  auto reader = amqp_client::connect(amqp_url(), "test reader");
  CAF_REQUIRE(reader);
  CAF_REQUIRE(!(*reader)->consume(q, 10));
  auto left = (*reader)->next_message(std::chrono::milliseconds{500});
  CAF_REQUIRE(left);
  CAF_CHECK(!*left);
}

CAF_TEST_FIXTURE_SCOPE_END()
