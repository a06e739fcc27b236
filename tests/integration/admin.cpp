#define CAF_SUITE integration.admin
#include <caf/test/unit_test.hpp>

#include <cstdio>
#include <fstream>

#include "core/pg/claim_repository.hpp"
#include "core/pg/migrations.hpp"
#include "core/pg/result_repository.hpp"
#include "core/pg/routing_repository.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct fixture : cluster_fixture {
  std::string path = "/tmp/" + queue_prefix + "admin.json";
  claim_repository claims{names};
  result_repository results{names};

  fixture() {
    write_config_file(path, R"({"e": [{"job": "J", "queue": "q", "retryDelaysSeconds": []}]})");
  }
  ~fixture() { std::remove(path.c_str()); }

  std::pair<int, std::string> ctl(const std::string& args) {
    return run_command("env -u OUTBOX_DATABASE_URL " + std::string{OUTBOXCTL_PATH}
                       + " " + args + " --config " + path);
  }

  // n routed deliveries, claimed; returns the claimed jobs.
  std::vector<job_to_send> dispatched(int n) {
    routing_repository router{names, {make_route("e", "J", "q", {})}};
    for (int i = 0; i < n; ++i)
      publish("e", "{}");
    if (!router.route_batch(db, 1000))
      CAF_FAIL("routing failed");
    auto c = claims.claim_batch(db, {"q", 1000});
    if (!c)
      CAF_FAIL("claim failed");
    return c->jobs;
  }

  void answer(const job_to_send& j, outcome o) {
    send_result r{j.delivery_id, j.dispatch_id, j.job, o, "worker says no", {}};
    if (!results.apply_results(db, {r}))
      CAF_FAIL("apply failed");
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(admin_tests, fixture)

CAF_TEST(failed deliveries are listed retried and sent again) {
  auto jobs = dispatched(3);
  for (auto& j : jobs)
    answer(j, outcome::retry); // no delays: failed at once
  auto listed = ctl("failed");
  check_ends(listed, 0, "delivery " + std::to_string(jobs[0].delivery_id));
  CAF_CHECK_NOT_EQUAL(listed.second.find("last error: worker says no"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(listed.second.find("3 failed deliveries shown"), std::string::npos);
  check_ends(ctl("expired --queue q"), 0, "no expired deliveries in queue q");
  auto first = std::to_string(jobs[0].delivery_id);
  check_ends(ctl("retry " + first + " 99999999"), 1,
             "delivery 99999999: not found");
  CAF_CHECK_EQUAL(status_of(jobs[0].delivery_id), "pending");
  check_ends(ctl("retry " + first), 1, "not failed or expired");
  check_ends(ctl("retry --status failed --queue q"), 0,
             "retried 2 failed deliveries of queue q");
  CAF_CHECK_EQUAL(count_status("pending"), 3);
  auto attempts = must_exec(db, "SELECT max(attempts) FROM " + all_deliveries(names) + " d");
  CAF_CHECK_EQUAL(attempts.int64(0, 0), 0);
  // Sent again: a new claim gives new dispatch ids.
  auto resent = claims.claim_batch(db, {"q", 10});
  CAF_REQUIRE(resent);
  CAF_CHECK_EQUAL(resent->jobs.size(), 3u);
  CAF_CHECK_NOT_EQUAL(resent->jobs[0].dispatch_id, jobs[0].dispatch_id);
}

CAF_TEST(forget deletes only final deliveries and their event) {
  auto jobs = dispatched(2);
  answer(jobs[0], outcome::completed);
  check_ends(ctl("forget " + std::to_string(jobs[1].delivery_id)), 1,
             "still pending or dispatched");
  CAF_CHECK_EQUAL(ctl("forget 99999999").first, 1);
  auto done = ctl("forget " + std::to_string(jobs[0].delivery_id));
  CAF_CHECK_EQUAL(done.first, 0);
  auto events = must_exec(db, "SELECT count(*) FROM " + names.events);
  CAF_CHECK_EQUAL(events.int64(0, 0), 1); // its event went with it
  CAF_CHECK_EQUAL(ctl("forget").first, 2);
  CAF_CHECK_EQUAL(ctl("forget 1 2").first, 2);
}

CAF_TEST(prune deletes old final deliveries and bad arguments are refused) {
  auto jobs = dispatched(3);
  answer(jobs[0], outcome::completed);
  answer(jobs[1], outcome::failed);
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET finished_at = now() - interval '5 hours'"
                    " WHERE finished_at IS NOT NULL");
  must_exec(db, "UPDATE " + names.events + " SET created_at = now() - interval '5 hours'");
  must_exec(db, "UPDATE " + names.deliveries
                  + "_completed SET completed_at = now() - interval '5 hours'");
  CAF_CHECK_EQUAL(ctl("prune").first, 2);
  CAF_CHECK_EQUAL(ctl("prune --hours -1").first, 2);
  check_ends(ctl("prune --hours 1 --status pending"), 2,
             "\"pending\" is not a final status");
  check_ends(ctl("prune --hours 6"), 0, "pruned 0 deliveries");
  check_ends(ctl("prune --hours 4 --status failed"), 0,
             "pruned 1 deliveries and 1 events");
  auto rest = ctl("prune --hours=4");
  CAF_CHECK_NOT_EQUAL(rest.second.find("pruned 1 deliveries and 1 events"),
                      std::string::npos);
  CAF_CHECK_EQUAL(count_status("dispatched"), 1); // the open one stays
  CAF_CHECK_EQUAL(ctl("retry abc").first, 2);
  CAF_CHECK_EQUAL(ctl("retry --status completed").first, 2);
  CAF_CHECK_EQUAL(ctl("failed 12").first, 2);
  // A flag of another verb is refused, not ignored.
  check_ends(ctl("forget 1 --hours 3"), 2, "--hours does not apply to this verb");
  CAF_CHECK_EQUAL(ctl("failed --status failed").first, 2);
  CAF_CHECK_EQUAL(ctl("prune --hours 1 --queue q").first, 2);
  CAF_CHECK_EQUAL(ctl("failed --limit 0").first, 2);
  CAF_CHECK_EQUAL(ctl("migrate --json").first, 2);
  // --database: a config without `databases` serves one, named default.
  CAF_CHECK_EQUAL(ctl("failed --database default").first, 0);
  CAF_CHECK_EQUAL(ctl("migrate --database default").first, 0);
  check_ends(ctl("failed --database billing"), 2,
             "--database billing: no such database; the config serves default");
  check_ends(ctl("pause q --database Orders"), 2,
             "--database: a name is 1 to 32 of a-z, 0-9 and _");
  check_ends(ctl("drain n1 --database default"), 2,
             "--database does not apply to this verb");
}

CAF_TEST(quarantined events and deliveries are listed and removed) {
  check_ends(ctl("quarantined"), 0, "nothing quarantined");
  // An event whose key the coalescing index cannot hold, inserted past the
  // publish function; a delivery the claim fails on (a trigger stands in
  // for any row a claim could fail on).
  auto poison = must_exec(db, "INSERT INTO " + names.events
                                + " (event_type, payload, key) SELECT 'e', '{}',"
                                  " string_agg(md5(i::text), '') FROM"
                                  " generate_series(1, 250) i RETURNING id")
                  .text(0, 0);
  routing_repository router{names, {make_route("e", "J", "q", {})}};
  publish("e", "{}");
  publish("e", "{}");
  auto routed = router.route_batch(db, 100);
  CAF_REQUIRE(routed);
  CAF_CHECK_EQUAL(routed->events_quarantined, 1);
  auto bad = must_exec(db, "SELECT min(id) FROM " + names.deliveries).text(0, 0);
  must_exec(db, "CREATE FUNCTION " + names.deliveries + "_poison() RETURNS trigger"
                  " LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'poison'"
                  " USING ERRCODE = '22023'; END $$");
  must_exec(db, "CREATE TRIGGER " + names.deliveries + "_poison BEFORE UPDATE ON "
                  + names.deliveries + " FOR EACH ROW WHEN (OLD.id = " + bad
                  + " AND NEW.status = 'dispatched') EXECUTE FUNCTION "
                  + names.deliveries + "_poison()");
  auto c = claims.claim_batch(db, {"q", 100});
  CAF_REQUIRE(c);
  CAF_CHECK_EQUAL(c->quarantined, 1);
  must_exec(db, "DROP FUNCTION " + names.deliveries + "_poison() CASCADE");
  auto listed = ctl("quarantined");
  check_ends(listed, 0, "1 quarantined events and 1 quarantined deliveries shown");
  CAF_CHECK_NOT_EQUAL(listed.second.find("event " + poison + "  e  key of 8000 bytes"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(listed.second.find("reason: routing failed on this event with"
                                         " SQLSTATE 54000"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(listed.second.find("delivery " + bad + "  event"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(listed.second.find("reason: quarantined: the claim failed on"
                                         " this delivery with SQLSTATE 22023"),
                      std::string::npos);
  // Never the key itself.
  auto key_start = must_exec(db, "SELECT left(key, 32) FROM " + names.events
                                   + " WHERE id = " + poison)
                     .text(0, 0);
  CAF_CHECK_EQUAL(listed.second.find(key_start), std::string::npos);
  CAF_CHECK_EQUAL(ctl("quarantined --limit 0").first, 2);
  CAF_CHECK_EQUAL(ctl("quarantined 12").first, 2);
  check_ends(ctl("quarantined --limit 1"), 0, "(--limit reached)");
  // prune keeps quarantined events, however old.
  must_exec(db, "UPDATE " + names.events + " SET created_at = now() - interval '5 hours'"
                  " WHERE id = " + poison);
  check_ends(ctl("prune --hours 1 --status completed"), 0, "pruned 0 deliveries and 0 events");
  // discard removes quarantined events only; the delivery is failed: forget.
  auto normal = must_exec(db, "SELECT event_id FROM " + names.deliveries + " WHERE id = "
                                + bad)
                  .text(0, 0);
  check_ends(ctl("discard " + normal), 1, "not a quarantined event (only those can be discarded)");
  CAF_CHECK_EQUAL(ctl("discard").first, 2);
  CAF_CHECK_EQUAL(ctl("discard x").first, 2);
  check_ends(ctl("discard " + poison), 0, "event " + poison + ": deleted");
  check_ends(ctl("forget " + bad), 0, "deleted (and its event, if no other delivery had it)");
  check_ends(ctl("quarantined"), 0, "nothing quarantined");
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.events).int64(0, 0), 1);
}

CAF_TEST(a config of two databases migrates both and names one per verb) {
  // The second outbox lives in the same test database under its own
  // tables: two entries apart by their names (config check_apart).
  auto other = schema_names{}.with_prefix(unique_prefix());
  auto two_path = "/tmp/" + queue_prefix + "admin_two.json";
  {
    std::ofstream out{two_path};
    auto tables = [](const schema_names& n) { return "{" + tables_json(n) + "}"; };
    out << "{\"databaseUrl\": \"" << database_url() << "\", \"amqpUrl\": \""
        << amqp_url() << "\", \"routes\": {\"e\": [{\"job\": \"J\", \"queue\": "
        << "\"q\"}]}, \"databases\": {\"one\": " << tables(names)
        << ", \"two\": " << tables(other) << "}}";
  }
  auto ctl2 = [&](const std::string& args) {
    return run_command("env -u OUTBOX_DATABASE_URL " + std::string{OUTBOXCTL_PATH}
                       + " " + args + " --config " + two_path);
  };
  // migrate goes over every database, each line naming its own.
  auto migrated = ctl2("migrate");
  CAF_CHECK_EQUAL(migrated.first, 0);
  CAF_CHECK_NOT_EQUAL(migrated.second.find("one: schema is up to date"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(migrated.second.find("two: applied "), std::string::npos);
  auto tables = must_exec(db, "SELECT count(*) FROM pg_class WHERE relname = $1",
                          {other.deliveries});
  CAF_CHECK_EQUAL(tables.int64(0, 0), 1);
  check_ends(ctl2("migrate --database two"), 0, "schema is up to date (" +
             std::to_string(migrations().size()) + " migrations, tables "
             + other.events + ", " + other.deliveries + ")");
  // A verb of one database needs its name; it acts on that one alone.
  check_ends(ctl2("failed"), 2,
             "--database NAME is required: the config serves one, two");
  check_ends(ctl2("failed --database three"), 2,
             "--database three: no such database; the config serves one, two");
  CAF_CHECK_EQUAL(ctl2("pause q --database two").first, 0);
  auto paused_two = must_exec(db, "SELECT count(*) FROM " + other.deliveries
                                    + "_paused");
  CAF_CHECK_EQUAL(paused_two.int64(0, 0), 1);
  auto paused_one = must_exec(db, "SELECT count(*) FROM " + names.deliveries
                                    + "_paused");
  CAF_CHECK_EQUAL(paused_one.int64(0, 0), 0);
  std::remove(two_path.c_str());
  if (auto err = drop_schema(db, other))
    CAF_FAIL("dropping the second schema failed: " << render(err));
}

CAF_TEST_FIXTURE_SCOPE_END()
