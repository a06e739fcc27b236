#define CAF_SUITE integration.cluster
#include <caf/test/unit_test.hpp>

#include <algorithm>
#include <mutex>

#include <caf/event_based_actor.hpp>

#include "actors/lifecycle_group.hpp"
#include "core/producer/event_store.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/test_worker.hpp"
#include "core/base/timestamp.hpp"

using namespace outbox;
using namespace outbox::testing;

CAF_TEST_FIXTURE_SCOPE(cluster_tests, cluster_fixture)

CAF_TEST(an event is delivered and completed end to end) {
  auto q = queue("orders");
  running_node node{make_config({make_route("order.placed", "Confirm", q, {60})})};
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::completed;
                     }};
  auto event = publish("order.placed", R"({"order":17})");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; }));
  auto seen = worker.seen();
  CAF_REQUIRE_EQUAL(seen.size(), 1u);
  auto& job = seen[0];
  auto d = deliveries_of("Confirm");
  CAF_REQUIRE_EQUAL(d.size(), 1u);
  CAF_CHECK_EQUAL(job.delivery_id, d[0].first);
  CAF_CHECK_EQUAL(job.event_id, event);
  CAF_CHECK_EQUAL(job.job, "Confirm");
  CAF_CHECK_EQUAL(job.event_type, "order.placed");
  CAF_CHECK_EQUAL(job.payload_json, R"({"order":17})");
  CAF_CHECK_EQUAL(job.last_attempt, false);
  CAF_CHECK_EQUAL(job.message_id, std::to_string(job.delivery_id));
  CAF_CHECK_EQUAL(job.correlation_id, job.dispatch_id);
  CAF_CHECK_EQUAL(job.type, "Confirm");
}

CAF_TEST(retry delays of one and one give exactly three sends) {
  auto q = queue("flaky");
  running_node node{make_config({make_route("e", "Flaky", q, {1, 1})})};
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::retry;
                     }};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("failed") == 1; }));
  auto d = deliveries_of("Flaky");
  auto sends = worker.seen_for(d.at(0).first);
  CAF_REQUIRE_EQUAL(sends.size(), 3u);
  CAF_CHECK_EQUAL(sends[0].last_attempt, false);
  CAF_CHECK_EQUAL(sends[1].last_attempt, false);
  CAF_CHECK_EQUAL(sends[2].last_attempt, true);
  CAF_CHECK_NOT_EQUAL(sends[0].dispatch_id, sends[1].dispatch_id);
  CAF_CHECK_NOT_EQUAL(sends[1].dispatch_id, sends[2].dispatch_id);
  // No fourth send, proven by progress rather than by waiting: a fourth
  // would be due one retry delay (1 s) after the failure, so a dispatcher
  // pass that starts after one that ended later than that claims it, and
  // (claims go by available_at, id) sends it ahead of a marker delivery
  // published then, on the same queue.
  auto failed_at = now_ms();
  CAF_REQUIRE(wait_until([&] {
    return node.metrics_of("dispatcher " + q).last_pass_ms >= failed_at + 1000;
  }));
  publish("e", "{}"); // the marker
  CAF_REQUIRE(wait_until([&] {
    return worker.seen().size() > worker.seen_for(d.at(0).first).size();
  }));
  CAF_CHECK_EQUAL(worker.seen_for(d.at(0).first).size(), 3u); // no fourth
}

CAF_TEST(a repeating last delay backs off until the time to live) {
  auto q = queue("backoff");
  auto r = make_route("e", "Backoff", q, {1, 2});
  r.rules.repeat_last_delay = true;
  r.rules.ttl_seconds = 6;
  running_node node{make_config({r})};
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::retry;
                     }};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("expired") == 1; }));
  auto sends = worker.seen();
  // Sends at about 0, 1, 3 and 5 s: the delays 1, 2, then 2 again; the
  // next would start after the time to live, so the last one says so.
  CAF_REQUIRE_GREATER_OR_EQUAL(sends.size(), 3u);
  CAF_CHECK_LESS_OR_EQUAL(sends.size(), 4u);
  CAF_CHECK_GREATER_OR_EQUAL(sends[1].received_at - sends[0].received_at, 0.9);
  for (size_t i = 2; i < sends.size(); ++i)
    CAF_CHECK_GREATER_OR_EQUAL(sends[i].received_at - sends[i - 1].received_at, 1.9);
  for (size_t i = 0; i + 1 < sends.size(); ++i)
    CAF_CHECK_EQUAL(sends[i].last_attempt, false);
  CAF_CHECK_EQUAL(sends.back().last_attempt, true);
}

CAF_TEST(no retry delays fail at the first error) {
  auto q = queue("once");
  running_node node{make_config({make_route("e", "Once", q, {})})};
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::retry;
                     }};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("failed") == 1; }));
  auto sends = worker.seen();
  CAF_REQUIRE_EQUAL(sends.size(), 1u);
  CAF_CHECK_EQUAL(sends[0].last_attempt, true);
}

CAF_TEST(a job that never answers times out and is sent again) {
  auto q = queue("silent");
  running_node node{make_config({make_route("e", "Slow", q, {1}, 1)})};
  test_worker worker{amqp_url(), q, [](const job_seen&, int send) {
                       return send == 1 ? answer::silent : answer::completed;
                     }};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; }));
  auto sends = worker.seen();
  CAF_REQUIRE_EQUAL(sends.size(), 2u);
  CAF_CHECK_EQUAL(sends[0].last_attempt, false);
  CAF_CHECK_EQUAL(sends[1].last_attempt, true);
  auto attempts = must_exec(db, "SELECT attempts FROM " + all_deliveries(names) + " d");
  CAF_CHECK_EQUAL(attempts.int64(0, 0), 1); // the timeout counted once
}

// A job message nobody took before the relay stopped waiting for its result
// is dropped by RabbitMQ (its expiration): a worker that comes back later
// runs only sends that still count, never the stale one before them.
CAF_TEST(a job message nobody took dies when its send times out) {
  auto q = queue("late");
  running_node node{make_config({make_route("e", "Late", q, {1, 1, 1}, 6)})};
  publish("e", "{}");
  auto dispatch = [&](int attempts) {
    auto r = must_exec(db, "SELECT dispatch_id::text FROM " + names.deliveries
                             + " WHERE status = 'dispatched' AND attempts = "
                             + std::to_string(attempts));
    return r.size() == 1 ? r.text(0, 0) : std::string{};
  };
  std::string first;
  CAF_REQUIRE(wait_until([&] { return !(first = dispatch(0)).empty(); }));
  // The first send timed out unread and the delivery went out again.
  CAF_REQUIRE(wait_until([&] { return !dispatch(1).empty(); }, std::chrono::seconds{20}));
  test_worker worker{amqp_url(), q, [](const job_seen&, int) { return answer::completed; }};
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; }));
  auto sends = worker.seen();
  CAF_REQUIRE_GREATER_OR_EQUAL(sends.size(), 1u);
  for (auto& s : sends)
    CAF_CHECK_NOT_EQUAL(s.dispatch_id, first);
}

CAF_TEST(two routes of one event progress independently) {
  auto qa = queue("stock");
  auto qb = queue("search");
  running_node node{make_config({make_route("stock.changed", "Publish", qa, {}),
                                 make_route("stock.changed", "Index", qb, {1})})};
  test_worker good{amqp_url(), qa, [](const job_seen&, int) {
                     return answer::completed;
                   }};
  test_worker bad{amqp_url(), qb, [](const job_seen&, int send) {
                    return send == 1 ? answer::failed : answer::completed;
                  }};
  publish("stock.changed", R"({"sku":"A"})");
  CAF_REQUIRE(wait_until([&] { return open_deliveries() == 0
                                      && count_status("completed") == 1; }));
  auto published = deliveries_of("Publish");
  auto indexed = deliveries_of("Index");
  CAF_CHECK_EQUAL(published.at(0).second, "completed");
  CAF_CHECK_EQUAL(indexed.at(0).second, "failed"); // not retried
  CAF_CHECK_EQUAL(bad.seen().size(), 1u);
}

CAF_TEST(a stream of events all complete and the status actor counts them) {
  auto q = queue("bulk");
  running_node node{make_config({make_route("e", "Bulk", q, {1})})};
  test_worker worker{amqp_url(), q, [](const job_seen&, int send) {
                       return send == 1 && std::rand() % 4 == 0 ? answer::retry
                                                                 : answer::completed;
                     }};
  for (int i = 0; i < 300; ++i)
    publish("e", "{\"n\":" + std::to_string(i) + "}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 300; }));
  CAF_CHECK_EQUAL(open_deliveries(), 0);
  auto s = node.status();
  CAF_REQUIRE_EQUAL(s.databases.size(), 1u);
  CAF_CHECK(s.databases[0].ok);
  CAF_CHECK_EQUAL(s.databases[0].counts.per_status.at("completed"), 300);
  CAF_CHECK_EQUAL(s.databases[0].counts.per_queue.at(q).per_status.at("completed"), 300);
  CAF_REQUIRE_EQUAL(s.nodes.size(), 1u);
  CAF_CHECK(s.nodes[0].up);
  // Router, dispatcher, result handler, sweeper and retention.
  CAF_CHECK_EQUAL(s.nodes[0].actors.size(), 5u);
}

namespace {

/// An embedder's subscriber, thread-safe to read from the test.
struct lifecycle_log_book {
  std::mutex mtx;
  std::vector<lifecycle_event> events;

  std::vector<std::string> kinds_of(int64_t event_id) {
    std::lock_guard<std::mutex> guard{mtx};
    std::vector<std::string> out;
    for (auto& ev : events)
      if (ev.event_id == event_id)
        out.push_back(to_string(ev.kind));
    return out;
  }
};

/// Asked of the subscriber: answered once it has joined the group.
using joined_atom = caf::atom_constant<caf::atom("joined")>;

caf::behavior lifecycle_subscriber(caf::event_based_actor* self,
                                   std::shared_ptr<lifecycle_log_book> book) {
  self->join(lifecycle_group(self->system()));
  return {
    [book](const lifecycle_event& ev) {
      std::lock_guard<std::mutex> guard{book->mtx};
      book->events.push_back(ev);
    },
    [](joined_atom) { return true; },
  };
}

} // namespace

CAF_TEST(an embedder subscribes to the typed lifecycle events of its node) {
  auto q = queue("watched");
  running_node node{make_config({make_route("e", "Watched", q, {1})})};
  test_worker worker{amqp_url(), q, [](const job_seen&, int send) {
                       return send == 1 ? answer::retry : answer::completed;
                     }};
  auto book = std::make_shared<lifecycle_log_book>();
  auto sub = node.sys->spawn(lifecycle_subscriber, book);
  // The subscriber joins when it first runs, on a scheduler thread: an
  // event stored before then would be missed. Its answer proves it joined.
  {
    caf::scoped_actor self{*node.sys};
    self->request(sub, std::chrono::seconds{10}, joined_atom::value)
      .receive([](bool) {},
               [&](caf::error& err) {
                 CAF_FAIL("the subscriber did not answer: " << node.sys->render(err));
               });
  }
  db_event_store store{names};
  store.observe(lifecycle_forwarder(*node.sys));
  must_exec(db, "BEGIN");
  event ev;
  ev.event_type = "e";
  ev.payload = "{}";
  auto id = store.add(db.native(), ev);
  CAF_REQUIRE(id);
  must_exec(db, "COMMIT");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; }));
  CAF_REQUIRE(wait_until([&] { return book->kinds_of(*id).size() == 5; }));
  // Steps reported by different actors (the dispatcher's "published"
  // after the broker's confirm, the result handler's "retry_scheduled" and
  // "completed") reach a subscriber in no fixed order: a worker may answer
  // before the dispatcher has seen the confirm. "stored" comes first (the
  // producer's own, before the commit); the rest are checked as a set.
  auto kinds = book->kinds_of(*id);
  CAF_REQUIRE_EQUAL(kinds.size(), 5u);
  CAF_CHECK_EQUAL(kinds.front(), "stored");
  std::sort(kinds.begin() + 1, kinds.end());
  CAF_CHECK_EQUAL(kinds, (std::vector<std::string>{"stored", "completed",
                                                   "published", "published",
                                                   "retry_scheduled"}));
  {
    std::lock_guard<std::mutex> guard{book->mtx};
    for (auto& e : book->events)
      if (e.kind == lifecycle_kind::retry_scheduled)
        CAF_CHECK_GREATER(e.next_try_ms, now_ms() - 5000);
  }
  // The node agent subscribes too: the status view counts them.
  CAF_REQUIRE(wait_until([&] {
    auto s = node.status();
    auto& lc = s.nodes.at(0).lifecycle;
    return lc.count("completed") && lc.at("completed") == 1;
  }));
  auto lc = node.status().nodes.at(0).lifecycle;
  CAF_CHECK_EQUAL(lc.at("published"), 2);
  CAF_CHECK_EQUAL(lc.at("retry_scheduled"), 1);
  CAF_CHECK_EQUAL(lc.at("stored"), 1);
  caf::anon_send_exit(sub, caf::exit_reason::user_shutdown);
}

CAF_TEST_FIXTURE_SCOPE_END()
