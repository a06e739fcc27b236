// The plans of the relay's statements once the tables have grown after the
// session began: a plan fixed while the deliveries table was nearly empty
// made every result batch scan the whole table (the completion stall).
#define CAF_SUITE integration.query_plans
#include <caf/test/unit_test.hpp>

#include "core/pg/db_stores.hpp"
#include "core/pg/event_probe.hpp"
#include "core/pg/retention_repository.hpp"
#include "tests/integration/delivery_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

bool has(const std::string& plan, const std::string& what) {
  return plan.find(what) != std::string::npos;
}

/// Whether a Sort node (not a Merge Append's merge, which also prints a
/// "Sort Key") sorts by `key`: its key is on the line after it.
bool sorts_by(const std::string& plan, const std::string& key) {
  for (size_t at = plan.find("Sort  ("); at != std::string::npos;
       at = plan.find("Sort  (", at + 1)) {
    auto next = plan.find('\n', at);
    if (next == std::string::npos)
      return false;
    auto end = plan.find('\n', next + 1);
    if (plan.substr(next, end - next).find("Sort Key: " + key) != std::string::npos)
      return true;
  }
  return false;
}

/// The lines of an EXPLAIN as one text.
std::string plan_text(const pg_rows& rows) {
  std::string plan;
  for (int i = 0; i < rows.size(); ++i)
    plan += rows.text(i, 0) + "\n";
  return plan;
}

struct plan_fixture : delivery_fixture {
  /// Runs routing (with a keyed event, so coalescing runs too), the claim,
  /// both result paths (completions alone, and a mixed batch) and the sweep
  /// `rounds` times while the tables are small, so that PostgreSQL would
  /// settle on a generic plan for each statement.
  void apply_small_batches(int rounds) {
    for (int i = 0; i < rounds; ++i) {
      publish("e", "{}", "k");
      make_deliveries(3, {});
      auto c = claim();
      CAF_REQUIRE_GREATER_OR_EQUAL(c.jobs.size(), 3u);
      apply({result_of(c.jobs[0], outcome::completed)});
      apply({result_of(c.jobs[1], outcome::completed),
             result_of(c.jobs[2], outcome::failed)});
      if (!sweeps.sweep(db, 100))
        CAF_FAIL("sweep failed");
    }
  }

  /// Adds `n` deliveries without going through the relay: sent and then
  /// completed, as under load, so that the partial timeout index still holds
  /// an entry for each until a vacuum.
  void grow(int n) {
    must_exec(db, "WITH e AS (INSERT INTO " + names.events
                    + " (event_type, payload, content_type, routed_at)"
                      " SELECT 'e', '{}', 'application/json', now()"
                      " FROM generate_series(1, "
                    + std::to_string(n)
                    + ") RETURNING id) INSERT INTO " + names.deliveries
                    + " (event_id, job, queue, retry_delays,"
                      " delivery_timeout_seconds, status, dispatch_id,"
                      " dispatched_at, delivery_timeout_at)"
                      " SELECT id, 'J', 'q', '{60}', 3600, 'dispatched',"
                      " gen_random_uuid(), now(), now() + interval '1 h'"
                      " FROM e");
    must_exec(db, "UPDATE " + names.deliveries
                    + " SET status = 'completed', completed_at = now(),"
                      " finished_at = now() WHERE status = 'dispatched'");
  }

  /// Leaves statistics that say every event is of a type without routes,
  /// as after a stretch when only such events came in (the benchmark's
  /// baseline phase did this): estimated by those, finding the routed types
  /// by index looks dearer than reading the whole table.
  void analyze_with_other_unrouted_events(int n) {
    must_exec(db, "INSERT INTO " + names.events
                    + " (event_type, payload) SELECT 'other', '{}'"
                      " FROM generate_series(1, "
                    + std::to_string(n) + ")");
    must_exec(db, "ANALYZE " + names.events);
    must_exec(db, "DELETE FROM " + names.events
                    + " WHERE event_type = 'other'");
  }

  /// Adds `n` events of a type without routes, set aside as the router
  /// leaves them (schema/015): the benchmark's business-commit phase left
  /// 100,000 such rows before its pipeline.
  void set_aside(int n) {
    must_exec(db, "WITH e AS (INSERT INTO " + names.events
                    + " (event_type, payload) SELECT 'other', '{}'"
                      " FROM generate_series(1, "
                    + std::to_string(n) + ") RETURNING id) INSERT INTO "
                    + names.events + "_unrouted (event_id, event_type)"
                    + " SELECT id, 'other' FROM e");
  }

  /// The blocks of the outbox's tables and indexes that running this
  /// connection's prepared statement with `marker` fetched (the
  /// transaction's own counters, data-modifying CTEs included), in a
  /// transaction rolled back.
  int64_t blocks_of(const std::string& marker, const std::string& args) {
    auto name = must_exec(db, "SELECT name FROM pg_prepared_statements"
                              " WHERE statement LIKE '%"
                                + marker + "%'");
    CAF_REQUIRE_EQUAL(name.size(), 1);
    return blocks_fetched(db, [&] {
      must_exec(db, "EXECUTE " + name.text(0, 0) + args);
    });
  }

  /// The blocks of the outbox's tables and indexes that `run` fetched on
  /// `session`, by the transaction's own counters, in a transaction rolled
  /// back.
  template <class Run>
  int64_t blocks_fetched(pg_connection& session, Run run) {
    must_exec(session, "BEGIN");
    auto before = fetched_blocks(session);
    run();
    auto after = fetched_blocks(session);
    must_exec(session, "ROLLBACK");
    return after - before;
  }

  /// No autovacuum on this test's tables: its ANALYZE of grown tables
  /// would have the plans made again, on their new size, before the checks.
  void without_autovacuum() {
    must_exec(db, "DO $$DECLARE t regclass; BEGIN FOR t IN SELECT oid FROM pg_class"
                  " WHERE relkind = 'r' AND relname LIKE '" + outbox_prefix()
                    + "%' LOOP EXECUTE format('ALTER TABLE %s SET"
                      " (autovacuum_enabled = off)', t); END LOOP; END$$");
  }

  /// Adds `n` events, none routed yet.
  void add_events(int n) {
    must_exec(db, "INSERT INTO " + names.events + " (event_type, payload)"
                  " SELECT 'e', '{}' FROM generate_series(1, "
                    + std::to_string(n) + ")");
  }

  /// The plan `session` keeps for its prepared probe, and the blocks one
  /// probe fetches (`read` runs it).
  template <class Read>
  std::pair<std::string, int64_t> probe_cost(pg_connection& session, Read read) {
    auto name = must_exec(session, "SELECT name FROM pg_prepared_statements"
                                   " WHERE statement LIKE '%string_agg(id::text%'");
    CAF_REQUIRE_EQUAL(name.size(), 1);
    auto plan = plan_text(must_exec(session, "EXPLAIN EXECUTE " + name.text(0, 0)));
    return {plan, blocks_fetched(session, read)};
  }

  int64_t fetched_blocks(pg_connection& session) {
    return must_exec(session, "SELECT COALESCE(sum(pg_stat_get_xact_blocks_fetched(oid)), 0)::bigint"
                              " FROM pg_class WHERE relname LIKE '"
                                + outbox_prefix() + "%'")
      .int64(0, 0);
  }

  /// What the names of this test's tables and indexes begin with.
  std::string outbox_prefix() const {
    return names.events.substr(0, names.events.rfind("events"));
  }

  /// Checks that the result statements go by the primary key, and the
  /// claim and the sweep by their partial indexes.
  void check_primary_key_plans() {
    auto complete = complete_plan();
    CAF_MESSAGE("completion plan:\n" << complete);
    CAF_CHECK(has(complete, primary_key()));
    CAF_CHECK(!has(complete, "Seq Scan"));
    CAF_CHECK(!has(complete, "timeout_idx"));
    auto claim = plan_of("AND available_at <= now()",
                         "('q', 100, '-infinity', 0, 1000, NULL)");
    CAF_MESSAGE("claim plan:\n" << claim);
    CAF_CHECK(has(claim, names.deliveries + "_ready_idx"));
    CAF_CHECK(!has(claim, "Seq Scan"));
    // The queue's in-flight count reads only dispatched rows (and the dead
    // entries of completed sends until a vacuum), not the table.
    CAF_CHECK(has(claim, "Index Scan using " + names.deliveries + "_timeout_idx"));
    // The index gives the order: the claim stops after its batch.
    CAF_CHECK(!has(claim, "Sort Key: " + names.deliveries + ".available_at"));
    auto sweep = plan_of("delivery_timeout_at <= now()",
                         "(100, '{}', '{}', '{}', '{}')");
    CAF_MESSAGE("sweep plan:\n" << sweep);
    CAF_CHECK(has(sweep, names.deliveries + "_timeout_idx"));
    CAF_CHECK(!has(sweep, "Seq Scan"));
    auto lock = lock_plan();
    CAF_MESSAGE("lock plan:\n" << lock);
    CAF_CHECK(has(lock, primary_key()));
    CAF_CHECK(!has(lock, "Seq Scan"));
    auto update = update_plan();
    CAF_MESSAGE("update plan:\n" << update);
    CAF_CHECK(has(update, primary_key()));
    CAF_CHECK(!has(update, "Seq Scan"));
    CAF_CHECK(!has(update, "timeout_idx"));
  }

  /// The plan of this connection's prepared statement that has `marker`.
  std::string plan_of(const std::string& marker, const std::string& args) {
    auto name = must_exec(db, "SELECT name FROM pg_prepared_statements"
                              " WHERE statement LIKE '%"
                                + marker + "%'");
    CAF_REQUIRE_EQUAL(name.size(), 1);
    return plan_text(
      must_exec(db, "EXPLAIN EXECUTE " + name.text(0, 0) + args));
  }

  /// How often this connection's prepared statement with `marker` was
  /// run on its generic plan and on a plan made for its values.
  std::pair<int64_t, int64_t> plan_counts(const std::string& marker) {
    auto rows = must_exec(db, "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
                              " WHERE statement LIKE '%"
                                + marker + "%'");
    CAF_REQUIRE_EQUAL(rows.size(), 1);
    return {rows.int64(0, 0), rows.int64(0, 1)};
  }

  std::string lock_plan() {
    return plan_of("ORDER BY id FOR UPDATE", "('{1,2,3}')");
  }

  std::string complete_plan() {
    return plan_of("AS r(id, dispatch_id, job)",
                   "('{1,2}', '{a,b}', '{J,J}')");
  }

  std::string update_plan() {
    return plan_of("AS u(id, dispatch_id, status",
                   "('{1,2}', '{00000000-0000-0000-0000-000000000001,"
                       "00000000-0000-0000-0000-000000000002}',"
                       " '{completed,completed}', '{0,0}', '{NULL,NULL}',"
                       " '{NULL,NULL}')");
  }

  std::string route_plan() {
    return plan_of("SET position = $4::bigint, scanned",
                   "('[{\"event_type\": \"e\", \"job\": \"J\", "
                   "\"queue\": \"q\", \"retry_delays\": [], "
                   "\"repeat_last_delay\": false, "
                   "\"delivery_timeout_seconds\": 60, "
                   "\"ttl_seconds\": 0, \"merge\": \"replace\", "
                   "\"ordering\": \"none\", \"on_failure\": \"continue\"}]',"
                   " '{1,2}', '{}', -1, '{q}', '{1000}', 0, '{}', false)");
  }

  std::string lead_plan() {
    return plan_of("AS leads", "(true)");
  }

  std::string look_plan() {
    return plan_of("AS set_aside", "(0, 100, '{}', '{e}')");
  }

  /// Coalescing is not prepared, so its plan is always the one made for the
  /// values at hand: this is it.
  std::string coalesce_plan() {
    auto prepared = must_exec(db, "SELECT 1 FROM pg_prepared_statements"
                                  " WHERE statement LIKE"
                                  " '%DISTINCT ON (d.coalesce_key%'");
    CAF_CHECK_EQUAL(prepared.size(), 0);
    routing_repository router{names, {}};
    return plan_text(must_exec(db, "EXPLAIN " + router.coalescing_statement(),
                               {std::string{"{k}"}, std::string{"{J}"},
                                std::string{"{q}"}}));
  }

  std::string primary_key() {
    return names.deliveries + "_pkey";
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(query_plan_tests, plan_fixture)

CAF_TEST(result statements find deliveries by key after the table grew) {
  CAF_REQUIRE(!db.exec_script("settings", relay_session_settings(commit_mode::relay_progress)));
  apply_small_batches(8);
  grow(30000);
  check_primary_key_plans();
  // Statistics that show next to nothing sent make the timeout index look
  // cheap, although it still holds the 30,000 completed sends.
  must_exec(db, "ANALYZE " + names.deliveries);
  check_primary_key_plans();
}

CAF_TEST(routing walks the events by primary key after the table grew) {
  CAF_REQUIRE(!db.exec_script("settings", routing_session_settings()));
  analyze_with_other_unrouted_events(20000);
  apply_small_batches(8);
  // Planned once, not at every pass: PostgreSQL's own choice re-planned
  // both for every batch (2 ms for the routing statement, three times its
  // run), and keeps doing so without routing_session_settings.
  for (auto marker : {"SET position = $4::bigint, scanned", "AS set_aside"}) {
    auto counts = plan_counts(marker);
    CAF_MESSAGE(marker << ": generic " << counts.first << ", custom " << counts.second);
    CAF_CHECK_GREATER_OR_EQUAL(counts.first, 8);
    CAF_CHECK_EQUAL(counts.second, 0);
  }
  grow(30000);
  auto look = look_plan();
  CAF_MESSAGE("look plan:\n" << look);
  CAF_CHECK(has(look, "_pkey on " + names.events + "_p"));
  CAF_CHECK(!has(look, "Bitmap"));
  CAF_CHECK(!has(look, "Seq Scan"));
  // Stops after the batch: the partitions' keys are merged in id order
  // (a Merge Append's "Sort Key"), never read whole into a sort.
  CAF_CHECK(!sorts_by(look, names.events + ".id"));
  // The lead reads the id sequence whole (it has no index): priced at
  // 10^10 with sequential scans off, which must not make it compiled.
  auto lead = lead_plan();
  CAF_MESSAGE("lead plan:\n" << lead);
  CAF_CHECK(!has(lead, "JIT"));
  auto route = route_plan();
  CAF_MESSAGE("route plan:\n" << route);
  CAF_CHECK(has(route, "_pkey on " + names.events + "_p"));
  CAF_CHECK(has(route, "Index Cond: (id = ANY ("));  // the events by key
  CAF_CHECK(!has(route, "Seq Scan"));
  CAF_CHECK(!has(route, "Bitmap"));
  // The event watcher's probe reads the newest ids from the primary key,
  // backwards, and stops after its window.
  auto probe = plan_text(must_exec(db, "EXPLAIN " + event_probe::sql(names)));
  CAF_MESSAGE("probe plan:\n" << probe);
  // The events' keys are per partition of the ring (schema/022).
  CAF_CHECK(has(probe, "Scan Backward using " + names.events + "_p"));
  CAF_CHECK(!has(probe, "Seq Scan"));
  CAF_CHECK(!has(probe, "Sort  ("));
  auto coalesce = coalesce_plan();
  CAF_MESSAGE("coalesce plan:\n" << coalesce);
  CAF_CHECK(has(coalesce, names.deliveries + "_coalesce_idx"));
  CAF_CHECK(!has(coalesce, "Seq Scan on " + names.deliveries));
  CAF_CHECK(!has(coalesce, "Seq Scan on " + names.events));
}

// Deleting a delivery (a completion, prune, forget) runs no statement of
// a foreign key: until schema/016 superseded_by's ON DELETE SET NULL ran
// one per deleted row, which every completion now is.
CAF_TEST(deleting a delivery runs no foreign key action) {
  auto refs = must_exec(db, "SELECT count(*) FROM pg_constraint"
                            " WHERE contype = 'f' AND confrelid = $1::regclass",
                        {names.deliveries});
  CAF_CHECK_EQUAL(refs.int64(0, 0), 0);
}

// Retention deletes a batch of one final status past its window: by the
// finished index, reading only the rows it deletes, and their events by
// key, however many final deliveries the table holds.
CAF_TEST(retention batches go by the finished index after the table grew) {
  CAF_REQUIRE(!db.exec_script("settings", relay_session_settings(commit_mode::relay_progress)));
  retention_repository retention{names};
  for (int i = 0; i < 8; ++i) { // prepared while the table is small
    CAF_REQUIRE(retention.delete_finished(db, delivery_status::completed, 3600, 2000,
                                              logged_completions::row_by_row));
    CAF_REQUIRE(retention.delete_quarantined_events(db, 3600, 2000));
  }
  grow(30000);
  must_exec(db, "ANALYZE " + names.deliveries);
  auto batch = plan_of("make_interval(secs => $2::float8)",
                       "('completed', '3600', 2000)");
  CAF_MESSAGE("retention batch plan:\n" << batch);
  CAF_CHECK(has(batch, "using " + names.deliveries + "_finished_idx"));
  CAF_CHECK(has(batch, "_pkey on " + names.events + "_p"));
  CAF_CHECK(!has(batch, "Seq Scan"));
  CAF_CHECK(!has(batch, "Bitmap"));
  auto quarantined = plan_of("q.quarantined_at < now()", "('3600', 2000)");
  CAF_MESSAGE("quarantined events plan:\n" << quarantined);
  CAF_CHECK(has(quarantined, "_quarantined_idx on " + names.events + "_p"));
  // The guard probes the deliveries of each event, not all of them.
  CAF_CHECK(has(quarantined, "Index Cond: (event_id = e.id)"));
  CAF_CHECK(!has(quarantined, "Merge"));
  CAF_CHECK(!has(quarantined, "Seq Scan"));
}

// The completion log (schema/016) has no B-tree: a late result's lookup
// and retention's batches go by its BRIN index, whose bitmap scan the
// relay's sessions rank with a full scan (both disabled): the cheaper wins,
// which is the index once the log has grown.
CAF_TEST(the completion log is read by its BRIN index after it grew) {
  CAF_REQUIRE(!db.exec_script("settings", relay_session_settings(commit_mode::relay_progress)));
  retention_repository retention{names};
  for (int i = 0; i < 8; ++i) { // prepared while the log is small
    make_deliveries(1, {});
    auto c = claim();
    CAF_REQUIRE_EQUAL(c.jobs.size(), 1u);
    apply({result_of(c.jobs[0], outcome::completed)});
    apply({result_of(c.jobs[0], outcome::completed)}); // late: looked up
    CAF_REQUIRE(retention.delete_finished(db, delivery_status::completed, 3600, 2000,
                                              logged_completions::row_by_row));
  }
  must_exec(db, "INSERT INTO " + names.deliveries
                  + "_completed (id, event_id, job, queue, attempts, created_at,"
                    " completed_at) SELECT g + 1000000, g, 'J', 'q', 0,"
                    " now() - interval '3 h', now() - make_interval(secs =>"
                    " (200000 - g) / 20.0) FROM generate_series(1, 200000) g");
  must_exec(db, "VACUUM ANALYZE " + names.deliveries + "_completed");
  // The log is partitioned (schema/022): the rows are all in the
  // partition of this moment's slot; an empty partition may be "scanned"
  // (it has no page), the one that holds the rows must go by its index.
  auto full = must_exec(db, "SELECT DISTINCT tableoid::regclass::text FROM "
                              + names.deliveries + "_completed")
                .text(0, 0);
  auto late = plan_of("_completed WHERE id = ANY", "('{1000005}')");
  CAF_MESSAGE("late result plan:\n" << late);
  CAF_CHECK(has(late, "Bitmap Index Scan on " + full + "_brin"));
  CAF_CHECK(!has(late, "Seq Scan on " + full + " "));
  // Retention runs it with bitmap scans on (retention_repository.cpp).
  CAF_REQUIRE(!db.exec_script("bitmap_on", "SET enable_bitmapscan = on"));
  auto batch = plan_of("DELETE FROM " + full + " l", "('3600', 2000)");
  CAF_MESSAGE("log retention plan:\n" << batch);
  CAF_CHECK(has(batch, "Bitmap Index Scan on " + full + "_brin"));
  CAF_CHECK(!has(batch, "Seq Scan on " + full + " "));
}

// The generic plans are made at the first pass, as a relay started on a
// new outbox makes them: on empty tables. They must not read the tables
// whole once these grew: 50 new events above the cursor, 30,000 routed ones
// and 30,000 set aside below it.
CAF_TEST(routing reads a few pages on plans made while the tables were empty) {
  CAF_REQUIRE(!db.exec_script("settings", routing_session_settings()));
  without_autovacuum();
  // Counted empty, as the benchmark's vacuum after its business-commit
  // phase left them (a table never vacuumed is guessed at ten pages).
  must_exec(db, "VACUUM " + names.events + ", " + names.events + "_unrouted, "
                  + names.deliveries);
  make_deliveries(1, {});
  grow(30000);
  set_aside(30000);
  auto position = must_exec(db, "SELECT max(id) FROM " + names.events).int64(0, 0);
  std::string ids;
  for (int i = 0; i < 50; ++i)
    ids += (i == 0 ? "" : ",") + std::to_string(publish("e", "{}"));
  auto look = blocks_of("AS set_aside", "(" + std::to_string(position)
                                             + ", 100, '{}', '{e}')");
  CAF_MESSAGE("look: " << look << " blocks");
  CAF_CHECK_LESS(look, 1000);
  auto route = blocks_of("SET position = $4::bigint, scanned",
                          "('[{\"event_type\": \"e\", \"job\": \"J\", "
                          "\"queue\": \"q\", \"retry_delays\": [], "
                          "\"repeat_last_delay\": false, "
                          "\"delivery_timeout_seconds\": 60, "
                          "\"ttl_seconds\": 0, \"merge\": \"none\", "
                          "\"ordering\": \"none\", \"on_failure\": \"continue\"}]',"
                          " '{" + ids + "}', '{}', -1, '{q}', '{1000}', 0, '{}', false)");
  CAF_MESSAGE("route: " << route << " blocks");
  CAF_CHECK_LESS(route, 3000);
}

// The event watcher's probe has no parameters: PostgreSQL plans it at the
// first probe and keeps that plan. Made while the events table was counted
// empty (vacuumed while empty, as the benchmark's business-commit phase
// leaves it after its cleanup), it must still go by the primary key
// once the table grew: the plan made on the empty table read and sorted
// every event at every probe, 6 to 13 ms each with 20,000 events.
CAF_TEST(the probe reads a few pages on a plan made while the events were empty) {
  without_autovacuum();
  must_exec(db, "VACUUM " + names.events); // counted empty
  auto probe = event_probe::connect(database_url(), names);
  CAF_REQUIRE(probe);
  CAF_REQUIRE(probe->read()); // prepared and planned now
  add_events(30000);
  auto [plan, blocks] = probe_cost(probe->connection(), [&] {
    CAF_REQUIRE(probe->read());
  });
  CAF_MESSAGE("probe plan:\n" << plan << "probe: " << blocks << " blocks");
  CAF_CHECK(has(plan, "Scan Backward using " + names.events + "_p"));
  CAF_CHECK(!has(plan, "Seq Scan"));
  CAF_CHECK_LESS(blocks, 100);
}

// Shows that the check above can fail: the same probe prepared on a plain
// session, as the watcher's was before it planned by index only.
CAF_TEST(a plain session keeps reading every event at each probe) {
  without_autovacuum();
  must_exec(db, "VACUUM " + names.events);
  auto plain = connect_db();
  auto sql = event_probe::sql(names);
  CAF_REQUIRE(plain.exec_prepared("probe", sql));
  add_events(30000);
  auto [plan, blocks] = probe_cost(plain, [&] {
    CAF_REQUIRE(plain.exec_prepared("probe", sql));
  });
  CAF_MESSAGE("probe plan:\n" << plan << "probe: " << blocks << " blocks");
  CAF_CHECK(has(plan, "Seq Scan"));
  CAF_CHECK_GREATER(blocks, 100);
}

// What the routing session plans by its values runs after
// plans_by_values_sql: the release of ordered keys (and, in the same
// place, coalescing, whose unnamed statement shows in no view).
CAF_TEST(routing plans the release of keys by its values) {
  CAF_REQUIRE(!db.exec_script("settings", routing_session_settings()));
  route r;
  r.event_type = "e";
  r.job = "J";
  r.queue = "q";
  r.rules.ordering = key_ordering::key;
  routing_repository router{names, {r}};
  for (int pass = 0; pass < 3; ++pass) {
    publish("e", "{}", "k" + std::to_string(pass));
    auto routed = router.route_batch(db, 100);
    CAF_REQUIRE(routed);
    CAF_REQUIRE_EQUAL(routed->events_routed, 1);
  }
  auto counts = plan_counts("_release_deliveries($1");
  CAF_MESSAGE("release: generic " << counts.first << ", custom " << counts.second);
  CAF_CHECK_EQUAL(counts.first, 0);
  CAF_CHECK_EQUAL(counts.second, 3);
}

// Shows that the check of routing's plan counts can fail: with the other
// relay sessions' settings PostgreSQL plans the routing statement for
// every batch's values.
CAF_TEST(without the routing settings each pass plans routing anew) {
  CAF_REQUIRE(!db.exec_script("settings", relay_session_settings(commit_mode::relay_progress)));
  apply_small_batches(8);
  auto counts = plan_counts("SET position = $4::bigint, scanned");
  CAF_MESSAGE("generic " << counts.first << ", custom " << counts.second);
  CAF_CHECK_GREATER_OR_EQUAL(counts.second, 8);
}

// Shows that the tests above can fail: the same steps without the sessions'
// settings keep the plans made for the small tables.
CAF_TEST(generic plans made on the small tables keep scanning them) {
  apply_small_batches(8);
  grow(30000);
  auto lock = lock_plan();
  CAF_MESSAGE("lock plan:\n" << lock);
  // Mostly a sequential scan; when autovacuum has analyzed the table in
  // between (tests run side by side), a bitmap scan: either way not the
  // plain index scan that the session settings make sure of.
  CAF_CHECK(has(lock, "Seq Scan") || has(lock, "Bitmap Heap Scan"));
  // Sequential scans off without JIT off: reading the id sequence (as the
  // routing lead does) is compiled, where the server has JIT at all.
  CAF_REQUIRE(!db.exec_script("seqscan", "SET enable_seqscan = off"));
  auto jit = must_exec(db, "SELECT pg_jit_available()").text(0, 0) == "t";
  auto read_sequence = "EXPLAIN SELECT last_value FROM " + names.events + "_id_seq";
  auto compiled = plan_text(must_exec(db, read_sequence));
  CAF_MESSAGE("sequence read without jit = off:\n" << compiled);
  CAF_CHECK_EQUAL(has(compiled, "JIT"), jit);
  CAF_REQUIRE(!db.exec_script("settings", relay_session_settings(commit_mode::relay_progress)));
  CAF_CHECK(!has(plan_text(must_exec(db, read_sequence)), "JIT"));
}

CAF_TEST_FIXTURE_SCOPE_END()
