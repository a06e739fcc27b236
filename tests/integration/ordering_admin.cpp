// The operator's side of per-key ordering on real servers: retry, skip,
// forget and prune of deliveries of ordered keys, the status counts of
// blocked keys, and the outboxctl verbs (blocked, skip) that show them.
#define CAF_SUITE integration.ordering_admin
#include <caf/test/unit_test.hpp>

#include <cstdio>
#include <fstream>
#include <set>

#include "core/pg/admin_repository.hpp"
#include "core/pg/key_admin_repository.hpp"
#include "core/pg/status_repository.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/ordering_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct admin_fixture : ordering_fixture {
  admin_repository admin{names};
  key_admin_repository keys{names};
  std::string path = "/tmp/" + names.events + "-ordering-admin.json";

  admin_fixture() {
    std::ofstream out{path};
    out << "{\"databaseUrl\": \"" << database_url() << "\",\n"
        << " \"eventsTableName\": \"" << names.events << "\",\n"
        << " \"deliveriesTableName\": \"" << names.deliveries << "\",\n"
        << " \"migrationsTableName\": \"" << names.migrations << "\",\n"
        << " \"publishFunctionName\": \"" << names.publish_function << "\",\n"
        << " \"routes\": {\"e\": [{\"job\": \"J\", \"queue\": \"oq\","
           " \"merge\": \"none\", \"ordering\": \"key\", \"onFailure\": \"block\"}]}}\n";
  }
  ~admin_fixture() { std::remove(path.c_str()); }

  std::pair<int, std::string> ctl(const std::string& args) {
    return run_command("env -u OUTBOX_DATABASE_URL " + std::string{OUTBOXCTL_PATH}
                       + " " + args + " --config " + path);
  }

  /// The delivery of an event (one route: one delivery).
  int64_t delivery_of(int64_t event_id) {
    return must_exec(db, "SELECT id FROM " + names.deliveries + " WHERE event_id = $1",
                     {std::to_string(event_id)})
      .int64(0, 0);
  }

  std::string column_of(int64_t delivery_id, const std::string& column) {
    return must_exec(db, "SELECT COALESCE(" + column + "::text, '') FROM "
                           + names.deliveries + " WHERE id = $1",
                     {std::to_string(delivery_id)})
      .text(0, 0);
  }

  /// Key K blocked: its first delivery (returned, an event id) failed for
  /// good on a `block` route, `behind` more of K parked behind it.
  int64_t blocked_key(int behind, const std::string& key = "K") {
    auto head = publish("e", "{}", key);
    for (int i = 0; i < behind; ++i)
      publish("e", "{}", key);
    route_events(1 + behind);
    auto c = claim("oq");
    CAF_REQUIRE_EQUAL(events_of(c), (std::set<int64_t>{head}));
    auto a = apply({result_of(c.jobs[0], outcome::failed)});
    CAF_REQUIRE_EQUAL(a.failed, 1);
    CAF_REQUIRE_EQUAL(claim("oq").jobs.size(), 0u);
    return head;
  }

  std::vector<skip_outcome> skip(std::vector<int64_t> ids) {
    auto r = keys.skip(db, ids);
    if (!r)
      CAF_FAIL("skip failed: " << render(r.error()));
    return *r;
  }

  /// Skips one delivery; what skip said (a value: CAF's checks take
  /// their arguments by reference).
  skip_verdict skip_one(int64_t id) {
    return skip({id}).at(0).verdict;
  }

  status_counts counts() {
    status_repository repo{names};
    auto c = repo.read(db);
    if (!c)
      CAF_FAIL("status failed: " << render(c.error()));
    return *c;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(ordering_admin_tests, admin_fixture)

CAF_TEST(retry of a blocked head sends it again and the key goes on after it) {
  use_routes({ordered_route("oq", failure_policy::block_key)});
  auto head = blocked_key(1);
  auto id = delivery_of(head);
  auto v = admin.retry(db, {id});
  CAF_REQUIRE(v);
  CAF_CHECK_EQUAL(v->at(0), admin_verdict::done);
  auto again = claim("oq");
  CAF_CHECK_EQUAL(events_of(again), (std::set<int64_t>{head}));
  CAF_CHECK_EQUAL(parked(), 1); // the second waits for the head
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 0u);
  auto a = apply({result_of(again.jobs[0], outcome::completed)});
  CAF_CHECK_EQUAL(a.completed, 1);
  CAF_CHECK_EQUAL(parked(), 0); // the second was handed the key
  auto next = claim("oq");
  CAF_REQUIRE_EQUAL(next.jobs.size(), 1u);
  CAF_CHECK_NOT_EQUAL(next.jobs[0].event_id, head);
}

CAF_TEST(retry of an ordered non head does not put two deliveries of the key out) {
  use_routes({ordered_route("oq", failure_policy::continue_key)});
  auto k1 = publish("e", "{}", "K");
  auto k2 = publish("e", "{}", "K");
  auto k3 = publish("e", "{}", "K");
  route_events(3);
  auto c1 = claim("oq");
  apply({result_of(c1.jobs.at(0), outcome::failed)}); // continue: K2 goes
  auto c2 = claim("oq");
  CAF_REQUIRE_EQUAL(events_of(c2), (std::set<int64_t>{k2}));
  auto v = admin.retry(db, {delivery_of(k1)});
  CAF_REQUIRE(v);
  CAF_CHECK_EQUAL(v->at(0), admin_verdict::done);
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 0u); // K2 still holds the key
  CAF_CHECK_EQUAL(parked(), 2);
  apply({result_of(c2.jobs[0], outcome::completed)});
  auto c3 = claim("oq");
  CAF_CHECK_EQUAL(events_of(c3), (std::set<int64_t>{k1})); // the earliest
  apply({result_of(c3.jobs.at(0), outcome::failed)});
  // And by status: parked as well, never beside the one out.
  auto c4 = claim("oq");
  CAF_CHECK_EQUAL(events_of(c4), (std::set<int64_t>{k3}));
  auto n = admin.retry_all(db, delivery_status::failed, std::string{"oq"});
  CAF_REQUIRE(n);
  CAF_CHECK_EQUAL(*n, 1);
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 0u);
  apply({result_of(c4.jobs.at(0), outcome::completed)});
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{k1}));
}

CAF_TEST(a skipped head retried blocks its key again when it fails again) {
  use_routes({ordered_route("oq", failure_policy::block_key)});
  auto head = blocked_key(0);
  auto id = delivery_of(head);
  CAF_CHECK_EQUAL(skip_one(id), skip_verdict::skipped);
  CAF_REQUIRE(admin.retry(db, {id}));
  CAF_CHECK_EQUAL(column_of(id, "skipped_at"), "");
  auto again = claim("oq");
  CAF_REQUIRE_EQUAL(events_of(again), (std::set<int64_t>{head}));
  auto k2 = publish("e", "{}", "K");
  route_events(1);
  apply({result_of(again.jobs[0], outcome::failed)});
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 0u); // blocked again
  CAF_CHECK_EQUAL(skip_one(id), skip_verdict::skipped);
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{k2}));
}

CAF_TEST(skip of a blocked head marks it failed and releases the key) {
  use_routes({ordered_route("oq", failure_policy::block_key)});
  auto head = blocked_key(2);
  auto id = delivery_of(head);
  auto out = skip({id});
  CAF_CHECK_EQUAL(out.at(0).verdict, skip_verdict::skipped);
  CAF_CHECK_EQUAL(out.at(0).before, delivery_status::failed);
  CAF_CHECK_EQUAL(column_of(id, "status"), "failed");
  CAF_CHECK_NOT_EQUAL(column_of(id, "skipped_at"), "");
  CAF_CHECK_EQUAL(column_of(id, "last_error"), "test"); // the worker's reason
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 1u);
  CAF_CHECK_EQUAL(parked(), 1);
  // Skipped once: no longer holding, so a second skip is refused.
  CAF_CHECK_EQUAL(skip_one(id), skip_verdict::not_holding);
}

CAF_TEST(skip of an expired or dispatched head fails it for good and hands the key on) {
  use_routes({ordered_route("oq", failure_policy::block_key)});
  publish_expiring("X", 1);
  auto x2 = publish("e", "{}", "X");
  auto d1 = publish("e", "{}", "D");
  auto d2 = publish("e", "{}", "D");
  route_events(4);
  expire_all_pending_ttl();
  auto swept = sweeps.sweep(db, 100);
  CAF_REQUIRE(swept);
  CAF_REQUIRE_EQUAL(swept->expired, 1);
  auto out = claim("oq");
  CAF_REQUIRE_EQUAL(events_of(out), (std::set<int64_t>{d1}));
  auto expired = must_exec(db, "SELECT id FROM " + names.deliveries
                                 + " WHERE status = 'expired'")
                   .int64(0, 0);
  auto r = skip({expired, out.jobs[0].delivery_id});
  CAF_CHECK_EQUAL(r.at(0).before, delivery_status::expired);
  CAF_CHECK_EQUAL(r.at(1).before, delivery_status::dispatched);
  CAF_CHECK_EQUAL(column_of(expired, "status"), "failed");
  CAF_CHECK_EQUAL(column_of(expired, "last_error"),
                  "skipped by an operator (was expired)");
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{x2, d2}));
  // The worker's late answer for the skipped send changes nothing.
  auto late = apply({result_of(out.jobs[0], outcome::completed)});
  CAF_CHECK_EQUAL(late.completed, 0);
  CAF_CHECK_EQUAL(column_of(out.jobs[0].delivery_id, "status"), "failed");
}

CAF_TEST(skip of a non holding or unordered delivery is refused) {
  use_routes({ordered_route("oq", failure_policy::block_key),
              plain_route("pq", "u")});
  auto head = blocked_key(1);
  auto waiting = must_exec(db, "SELECT id FROM " + names.deliveries
                                 + " WHERE status = 'pending'")
                   .int64(0, 0);
  auto plain = publish("u", "{}", "K");
  route_events(1);
  auto out = skip({waiting, delivery_of(plain), 99999999, delivery_of(head)});
  CAF_CHECK_EQUAL(out.at(0).verdict, skip_verdict::not_holding);
  CAF_CHECK_EQUAL(out.at(1).verdict, skip_verdict::not_ordered);
  CAF_CHECK_EQUAL(out.at(2).verdict, skip_verdict::unknown);
  CAF_CHECK_EQUAL(out.at(3).verdict, skip_verdict::skipped);
  CAF_CHECK_EQUAL(column_of(delivery_of(plain), "status"), "pending");
  // A completed one holds nothing either.
  auto next = claim("oq");
  apply({result_of(next.jobs.at(0), outcome::completed)});
  CAF_CHECK_EQUAL(skip_one(waiting), skip_verdict::not_holding);
  CAF_CHECK_EQUAL(column_of(waiting, "status"), "completed");
}

CAF_TEST(forget of a blocking head releases the key) {
  use_routes({ordered_route("oq", failure_policy::block_key)});
  auto head = blocked_key(1);
  auto v = admin.forget(db, delivery_of(head));
  CAF_REQUIRE(v);
  CAF_CHECK_EQUAL(*v, admin_verdict::done_unblocked);
  auto next = claim("oq");
  CAF_CHECK_EQUAL(next.jobs.size(), 1u);
  // Forgetting a final one that holds nothing changes no key.
  apply({result_of(next.jobs.at(0), outcome::completed)});
  auto done = admin.forget(db, next.jobs[0].delivery_id);
  CAF_REQUIRE(done);
  CAF_CHECK_EQUAL(*done, admin_verdict::done);
}

CAF_TEST(prune never deletes a blocking row) {
  use_routes({ordered_route("oq", failure_policy::block_key),
              plain_route("pq", "u")});
  auto head = blocked_key(1);
  auto u = publish("u", "{}");
  route_events(1);
  // Retention and prune keep the deliveries of events above the routing
  // cursor's stored position, which the router stores at most every
  // 100 ms: a later pass stores it.
  CAF_REQUIRE(wait_until([&] {
    CAF_REQUIRE(router->route_batch(db, 100));
    return must_exec(db, "SELECT position FROM " + names.events + "_routing")
             .int64(0, 0)
           >= u;
  }));
  auto p = claim("pq");
  apply({result_of(p.jobs.at(0), outcome::failed)});
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET finished_at = now() - interval '5 hours'"
                    " WHERE finished_at IS NOT NULL");
  auto r = admin.prune(db, 1, {delivery_status::failed});
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->deliveries, 1); // the unordered one only
  CAF_CHECK_EQUAL(r->kept_blocking, 1);
  CAF_CHECK_EQUAL(column_of(delivery_of(head), "status"), "failed");
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 0u); // still blocked
  check_ends(ctl("prune --hours 1"), 0,
             "kept 1 deliveries that block their key (outboxctl blocked)");
  // Once skipped, it is an old failed delivery like any other.
  skip({delivery_of(head)});
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET finished_at = now() - interval '5 hours'"
                    " WHERE status = 'failed'");
  auto after = admin.prune(db, 1, {delivery_status::failed});
  CAF_REQUIRE(after);
  CAF_CHECK_EQUAL(after->deliveries, 1);
  CAF_CHECK_EQUAL(after->kept_blocking, 0);
}

CAF_TEST(the status counts blocked keys and the longest wait for a key) {
  use_routes({ordered_route("oq", failure_policy::block_key),
              plain_route("pq", "u")});
  blocked_key(2, "K");
  blocked_key(0, "L");
  publish("u", "{}");
  route_events(1);
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET created_at = now() - interval '90 seconds'"
                    " WHERE status = 'pending' AND queue = 'oq'");
  auto c = counts();
  CAF_CHECK_EQUAL(c.per_queue["oq"].blocked_keys, 2);
  CAF_CHECK_GREATER_OR_EQUAL(c.per_queue["oq"].longest_held_key_seconds, 90.0);
  CAF_CHECK_LESS(c.per_queue["oq"].longest_held_key_seconds, 600.0);
  CAF_CHECK_EQUAL(c.per_queue["pq"].blocked_keys, 0);
  CAF_CHECK_EQUAL(c.per_queue["pq"].longest_held_key_seconds, 0.0);
  auto table = ctl("status --db");
  check_ends(table, 0, "blocked keys: 2 (onFailure: block; see outboxctl blocked)");
  auto json = ctl("status --db --json");
  CAF_CHECK_NOT_EQUAL(json.second.find("\"blockedKeys\":2,\"longestHeldKeySeconds\":9"),
                      std::string::npos);
  // The count reads the ordered index, not the table, once the table has
  // grown with deliveries of unordered routes.
  must_exec(db, "WITH e AS (INSERT INTO " + names.events
                  + " (event_type, payload, routed_at) SELECT 'u', '{}', now()"
                    " FROM generate_series(1, 20000) RETURNING id) INSERT INTO "
                  + names.deliveries
                  + " (event_id, job, queue, delivery_timeout_seconds, status,"
                    " finished_at) SELECT id, 'J', 'pq', 60, 'completed', now()"
                    " FROM e");
  must_exec(db, "ANALYZE " + names.deliveries);
  auto fresh = connect_db(); // plans with the new statistics
  status_repository repo{names};
  CAF_REQUIRE(repo.read(fresh));
  // Prepared under a name of the connection's own: found by its text.
  auto name = must_exec(fresh, "SELECT name FROM pg_prepared_statements WHERE"
                               " statement LIKE '%count(DISTINCT (coalesce_key, job))%'")
                .text(0, 0);
  auto plan = must_exec(fresh, "EXPLAIN EXECUTE \"" + name + "\"");
  std::string text;
  for (int i = 0; i < plan.size(); ++i)
    text += plan.text(i, 0) + "\n";
  CAF_MESSAGE("plan:\n" << text);
  CAF_CHECK_NOT_EQUAL(text.find(names.deliveries + "_ordered_idx"), std::string::npos);
  // The logged partition's rows by the index; the unlogged partition of
  // handed sends holds no ordered delivery and is empty here, which the
  // planner reads whole at no cost.
  CAF_CHECK_EQUAL(text.find("Seq Scan on " + names.deliveries + "_logged"),
                  std::string::npos);
}

CAF_TEST(outboxctl blocked lists blocked keys with their keys printed safely) {
  use_routes({ordered_route("oq", failure_policy::block_key)});
  check_ends(ctl("blocked"), 0, "no blocked keys");
  // A long key with spaces, quotes, a backslash and UTF-8 (the publish
  // function refuses control characters; the listing escapes them anyway).
  std::string key = "order \"7\" \\ gr\u00fc\u00dfe " + std::string(1000, 'k');
  auto head = blocked_key(2, key);
  auto listed = ctl("blocked");
  check_ends(listed, 0, "1 blocked keys shown");
  auto shown = "key \"order \\\"7\\\" \\\\ gr\u00fc\u00dfe " + std::string(1000, 'k')
               + "\"  job J  queue oq";
  CAF_CHECK_NOT_EQUAL(listed.second.find(shown), std::string::npos);
  auto id = std::to_string(delivery_of(head));
  CAF_CHECK_NOT_EQUAL(listed.second.find("blocked by delivery " + id + " (event "
                                         + std::to_string(head)
                                         + "), failed after 1 attempts, since "),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(listed.second.find("waiting behind it: 2 deliveries"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(listed.second.find("last error: test"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(listed.second.find("outboxctl skip DELIVERY_ID"),
                      std::string::npos);
  check_ends(ctl("blocked --queue other"), 0, "no blocked keys in queue other");
  check_ends(ctl("blocked --queue oq --limit 1"), 0, "(--limit reached)");
  check_ends(ctl("blocked 12"), 2, "blocked takes no ids");
  check_ends(ctl("blocked --limit 0"), 2, "--limit must be 1..100000");
  check_ends(ctl("blocked --hours 3"), 2, "--hours does not apply to this verb");
}

CAF_TEST(outboxctl skip gives a verdict per id and fails when one is refused) {
  use_routes({ordered_route("oq", failure_policy::block_key),
              plain_route("pq", "u")});
  auto head = blocked_key(1);
  auto id = std::to_string(delivery_of(head));
  auto plain_event = publish("u", "{}");
  route_events(1);
  auto plain = std::to_string(delivery_of(plain_event));
  auto waiting = must_exec(db, "SELECT id FROM " + names.deliveries
                                 + " WHERE status = 'pending' AND queue = 'oq'")
                   .text(0, 0);
  auto mixed = ctl("skip " + waiting + " " + plain + " 99999999");
  CAF_CHECK_EQUAL(mixed.first, 1);
  CAF_CHECK_NOT_EQUAL(mixed.second.find("delivery " + waiting
                                        + ": does not hold its key"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(mixed.second.find("delivery " + plain
                                        + ": its route does not order by key"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(mixed.second.find("delivery 99999999: not found"),
                      std::string::npos);
  check_ends(ctl("skip " + id), 0,
             "delivery " + id
               + ": skipped (was failed, now failed); its key goes on with the "
                 "next delivery");
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 1u);
  check_ends(ctl("skip " + id), 1, "does not hold its key");
  check_ends(ctl("skip"), 2, "skip takes delivery ids (positive integers)");
  check_ends(ctl("skip x1"), 2, "skip takes delivery ids");
  check_ends(ctl("skip 0"), 2, "skip takes delivery ids");
  check_ends(ctl("skip 1 --queue oq"), 2, "--queue does not apply to this verb");
  check_ends(ctl("blocked"), 0, "no blocked keys");
}

CAF_TEST(outboxctl forget of a blocking head says the key goes on) {
  use_routes({ordered_route("oq", failure_policy::block_key)});
  auto head = blocked_key(1);
  auto id = std::to_string(delivery_of(head));
  check_ends(ctl("forget " + id), 0,
             "it blocked its key, which goes on with the next delivery");
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 1u);
}

CAF_TEST_FIXTURE_SCOPE_END()
