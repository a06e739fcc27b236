// Built-in retention on real servers: outboxd nodes with the sweeper role
// delete final deliveries past their status's window (and the events left
// without deliveries), never an open one, one node at a time; a leader
// killed outright hands the job to another node within seconds.
#define CAF_SUITE integration.retention
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <algorithm>
#include <map>
#include <set>

#include "core/pg/retention_repository.hpp"
#include "core/pg/retention_ring.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/http_node.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct retention_fixture : cluster_fixture {
  std::string dir = "/tmp/" + queue_prefix;
  std::string config_path = dir + "outbox.json";

  retention_fixture() {
    write_config_file(config_path,
                      R"({"e": [{"job": "J", "queue": "q"}]})", 100,
                      R"("retentionHours": {"completed": 1, "superseded": 2,)"
                      R"( "failed": 3, "expired": 4}, )");
  }

  /// A sweeper node (and so retention) at --sleep 1, logging at debug.
  std::unique_ptr<child_process> sweeper_node(const std::string& name,
                                              std::vector<std::string> more = {}) {
    std::vector<std::string> args{"--config", config_path, "--roles", "sweeper",
                                  "--sleep", "1", "--log-level", "debug"};
    args.insert(args.end(), more.begin(), more.end());
    return std::make_unique<child_process>(OUTBOXD_PATH, args,
                                           dir + name + ".log");
  }

  std::string log_of(const std::string& name) {
    return read_file(dir + name + ".log");
  }

  /// An event routed `hours` ago (quarantined then, when asked): the
  /// routing cursor is moved past it, as the router would have.
  int64_t event(double hours, bool quarantined = false) {
    auto at = "now() - make_interval(secs => " + std::to_string(hours * 3600) + ")";
    auto id = must_exec(db, "INSERT INTO " + names.events
                              + " (event_type, payload, created_at, routed_at,"
                                " quarantined_at) VALUES ('e', '{}', " + at + ", "
                              + at + ", " + (quarantined ? at : "NULL")
                              + ") RETURNING id")
                .int64(0, 0);
    must_exec(db, "UPDATE " + names.events + "_routing SET position = $1"
                    " WHERE position < $1",
              {std::to_string(id)});
    return id;
  }

  /// An event never routed, written `hours` ago.
  int64_t unrouted_event(double hours) {
    return must_exec(db, "INSERT INTO " + names.events
                           + " (event_type, payload, created_at) VALUES ('other',"
                             " '{}', now() - make_interval(secs => "
                           + std::to_string(hours * 3600) + ")) RETURNING id")
      .int64(0, 0);
  }

  /// A delivery of `event` in `status` that finished `hours` ago (an open
  /// one too, which no pass would leave so: retention must keep it anyway).
  int64_t delivery(int64_t event, const std::string& status, double hours,
                   const std::string& job = "J") {
    return must_exec(db, "INSERT INTO " + names.deliveries
                           + " (event_id, job, queue, delivery_timeout_seconds,"
                             " status, created_at, finished_at) VALUES ($1, $2,"
                             " 'q', 60, $3, now() - make_interval(secs => $4),"
                             " now() - make_interval(secs => $4))"
                             " RETURNING id",
                     {std::to_string(event), job, status,
                      std::to_string(hours * 3600)})
      .int64(0, 0);
  }

  /// A delivery of `event` that completed `hours` ago into the completion
  /// log (schema/016).
  int64_t logged(int64_t event, double hours) {
    return must_exec(db, "INSERT INTO " + names.deliveries
                           + "_completed (id, event_id, job, queue, attempts,"
                             " created_at, completed_at) VALUES ($1 + 1000000,"
                             " $1, 'J', 'q', 0, now() - make_interval(secs => $2),"
                             " now() - make_interval(secs => $2)) RETURNING id",
                     {std::to_string(event), std::to_string(hours * 3600)})
      .int64(0, 0);
  }

  std::set<int64_t> ids_of(const std::string& table) {
    auto rows = must_exec(db, "SELECT id FROM " + table);
    std::set<int64_t> out;
    for (int i = 0; i < rows.size(); ++i)
      out.insert(rows.int64(i, 0));
    return out;
  }

  /// Sessions holding this outbox's retention lock now.
  int64_t lock_holders() {
    return must_exec(db, std::string{"SELECT count(*) FROM pg_locks l,"
                                     " (SELECT "}
                           + retention_lock_keys
                           + ") AS k(classid, objid) WHERE l.locktype = 'advisory'"
                             " AND l.granted AND l.objsubid = 2"
                             " AND l.classid = k.classid::oid"
                             " AND l.objid = k.objid::oid",
                     {names.deliveries})
      .int64(0, 0);
  }

  /// The passes of a node's actor of `role` in its /metrics, -1 when it
  /// has none (or the node does not answer yet).
  int64_t passes_of(uint16_t http, const std::string& role) {
    auto [status, text] = http_get(http, "/metrics");
    auto line = "outbox_actor_passes_total{role=\"" + role + "\",queue=\"\"} ";
    auto at = text.find(line);
    if (status != 200 || at == std::string::npos)
      return -1;
    return std::stoll(text.substr(at + line.size()));
  }

  int64_t retention_passes(uint16_t http) {
    return passes_of(http, "retention");
  }

  /// Old completed deliveries (and their events) for a leader to delete.
  /// In one transaction, so that a retention pass finds all or none of
  /// them (its log line then names the whole batch).
  void add_old_completed(int n) {
    CAF_REQUIRE(!db.exec_script("begin", "BEGIN"));
    for (int i = 0; i < n; ++i)
      delivery(event(1.5), "completed", 1.5);
    CAF_REQUIRE(!db.exec_script("commit", "COMMIT"));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(retention_tests, retention_fixture)

CAF_TEST(final deliveries past their window go and open ones stay however old) {
  std::set<int64_t> keep, kept_events;
  auto e_done = event(1.5);
  delivery(e_done, "completed", 1.5); // past 1 h: goes, and its event
  auto e_recent = event(0.5);
  auto recent = delivery(e_recent, "completed", 0.5);
  keep.insert(recent);
  auto e_sup = event(2.5);
  auto sup = delivery(e_sup, "superseded", 2.5);
  must_exec(db, "UPDATE " + names.deliveries + " SET superseded_by = $1 WHERE id = $2",
            {std::to_string(recent), std::to_string(sup)});
  auto e_sup2 = event(1.5);
  keep.insert(delivery(e_sup2, "superseded", 1.5));
  delivery(event(3.5), "failed", 3.5);
  auto e_failed = event(2.5);
  keep.insert(delivery(e_failed, "failed", 2.5));
  delivery(event(4.5), "expired", 4.5);
  auto e_expired = event(3.5);
  keep.insert(delivery(e_expired, "expired", 3.5));
  // An event keeps its row while any delivery of it is left.
  auto e_two = event(2.5);
  delivery(e_two, "completed", 1.5, "A");
  keep.insert(delivery(e_two, "failed", 2.5, "B"));
  // Open deliveries are never deleted, even with a finished_at long past.
  auto e_open = event(1000);
  keep.insert(delivery(e_open, "pending", 1000, "P"));
  keep.insert(delivery(e_open, "dispatched", 1000, "D"));
  // Quarantined events go after the longest window (4 h); unrouted never.
  event(5, true);
  auto e_quarantined = event(3, true);
  auto e_unrouted = unrouted_event(1000);
  // Completions in the completion log, and the events of no delivery left
  // in the deliveries table, go with their partition of the ring
  // (schema/022, the case below), not row by row: these stay here, where
  // the ring's span has just been set and so has not turned yet.
  auto e_logged_old = event(1.5);
  auto e_logged = event(0.5);
  std::set<int64_t> keep_logged{logged(e_logged_old, 1.5), logged(e_logged, 0.5),
                                logged(e_failed, 1.5)};
  // Above the routing cursor (routed ahead of an open transaction, say): a
  // router taking over walks it again, so its delivery stays.
  auto e_ahead = unrouted_event(2);
  keep.insert(delivery(e_ahead, "completed", 1.5));
  kept_events = {e_recent, e_sup2, e_failed, e_expired, e_two, e_open,
                 e_quarantined, e_unrouted, e_ahead, e_logged_old, e_logged};
  auto http = free_port();
  auto node = http_node(config_path, http,
                        {"--roles", "sweeper", "--sleep", "1", "--log-level", "debug"},
                        dir + "one.log");
  CAF_CHECK(wait_until([&] { return ids_of(names.deliveries) == keep; }));
  CAF_CHECK(wait_until([&] { return ids_of(names.events) == kept_events; }));
  CAF_CHECK_EQUAL(ids_of(names.deliveries), keep);
  CAF_CHECK_EQUAL(ids_of(names.events), kept_events);
  CAF_CHECK_EQUAL(ids_of(names.deliveries + "_completed"), keep_logged);
  // The node logs the batch after its commit: the rows can be gone a
  // moment before the line is written.
  CAF_CHECK(wait_until([&] {
    return mentions(read_file(dir + "one.log"),
                    "event=retention_batch deliveries=5 events=4 completed=2 "
                    "superseded=1 failed=1 expired=1 quarantinedEvents=1");
  }, std::chrono::seconds{10}));
  auto log = read_file(dir + "one.log");
  CAF_CHECK(mentions(log, "event=retention_leader"));
  // The counts in the node's metrics.
  CAF_CHECK(wait_until([&] {
    auto [status, text] = http_get(http, "/metrics");
    return status == 200
           && mentions(text, "role=\"retention\",queue=\"\",outcome=\"deleted_deliveries\"} 5")
           && mentions(text, "role=\"retention\",queue=\"\",outcome=\"deleted_events\"} 5")
           && mentions(text, "outbox_actor_rows_total{role=\"retention\",queue=\"\"} 10");
  }, std::chrono::seconds{10}));
  node->signal(SIGTERM);
  CAF_CHECK_EQUAL(node->wait(), 0);
}

CAF_TEST(the ring empties a partition at a time and moves out what must stay) {
  retention_ring ring{names};
  constexpr double window = 2, longest = 7200; // a span of 1 s
  // A producer's insert prepared before the span changes (a pool's
  // session, a publish function's cached plan) takes the new span after.
  auto producer = connect_db();
  auto insert_sql = "INSERT INTO " + names.events
                    + " (event_type, payload) VALUES ('other', '{}') RETURNING bucket";
  CAF_REQUIRE(producer.exec_prepared("ring_insert", insert_sql)); // prepares, inserts
  auto turned = ring.turn(db, window, longest);
  CAF_REQUIRE(turned);
  CAF_CHECK(turned->span_changed);
  CAF_REQUIRE(!producer.exec_script("begin", "BEGIN"));
  auto bucket = producer.exec_prepared("ring_insert", insert_sql);
  CAF_REQUIRE(bucket);
  auto slot = must_exec(producer, "SELECT floor(extract(epoch FROM now()))::bigint % 4");
  CAF_CHECK_EQUAL(bucket->int64(0, 0), slot.int64(0, 0));
  CAF_REQUIRE(!producer.exec_script("commit", "COMMIT"));
  must_exec(db, "DELETE FROM " + names.events);
  // One transaction: one clock, so every row is in one partition.
  CAF_REQUIRE(!db.exec_script("begin", "BEGIN"));
  auto e_gone = event(1);
  auto e_open = event(1);
  delivery(e_open, "pending", 1);
  auto e_failed = event(1); // a final delivery inside its window (3 h)
  auto failed = delivery(e_failed, "failed", 1);
  auto e_quarantined = event(1, true); // inside the longest window (2 h)
  event(3, true); // outside it: goes
  // Set aside (a type without routes): kept inside the longest window, for
  // a route added later; outside it the event goes with its place.
  auto set_aside = [&](double hours) {
    auto id = event(hours);
    must_exec(db, "INSERT INTO " + names.events + "_unrouted (event_id, event_type)"
                    " VALUES ($1, 'e')", {std::to_string(id)});
    return id;
  };
  auto e_set_aside = set_aside(1);
  set_aside(3);
  auto e_ahead = unrouted_event(1); // above the routing cursor
  logged(e_gone, 1);
  auto l_young = must_exec(db, "INSERT INTO " + names.deliveries
                                 + "_completed (id, event_id, job, queue, attempts,"
                                   " created_at, completed_at) VALUES (-1, $1, 'J',"
                                   " 'q', 0, now(), now() + interval '1 hour')"
                                   " RETURNING id",
                           {std::to_string(e_gone)})
                   .int64(0, 0); // inside the window
  logged(e_ahead, 1); // a recovery may need it while the cursor is below
  CAF_REQUIRE(!db.exec_script("commit", "COMMIT"));
  auto partition = must_exec(db, "SELECT tableoid::regclass::text FROM " + names.events
                                   + " WHERE id = $1", {std::to_string(e_gone)})
                     .text(0, 0);
  auto filenode = [&] {
    return must_exec(db, "SELECT pg_relation_filenode($1::regclass)", {partition})
      .int64(0, 0);
  };
  auto before = filenode();
  auto rows_before = must_exec(db, "SELECT count(*) FROM " + names.deliveries)
                       .int64(0, 0);
  // The span holds for a whole turn (4 s), then the clock comes to the
  // partition: while it holds an event the router has not passed, it
  // waits for the next turn, untouched.
  CAF_CHECK(wait_until([&] {
    auto t = ring.turn(db, window, longest);
    CAF_REQUIRE(t);
    CAF_REQUIRE(!t->emptied);
    return t->behind;
  }, std::chrono::seconds{30}));
  CAF_CHECK_EQUAL(filenode(), before);
  CAF_CHECK_EQUAL(ids_of(names.events).size(), 8u);
  // The router passes it; at the partition's next turn TRUNCATE gives it
  // a new file.
  must_exec(db, "UPDATE " + names.events + "_routing SET position = $1",
            {std::to_string(e_ahead)});
  ring_outcome emptied;
  CAF_CHECK(wait_until([&] {
    auto t = ring.turn(db, window, longest);
    CAF_REQUIRE(t);
    if (t->emptied)
      emptied = *t;
    return filenode() != before;
  }, std::chrono::seconds{30}));
  CAF_CHECK(emptied.emptied);
  CAF_CHECK_EQUAL(emptied.deleted.events, 4);
  CAF_CHECK_EQUAL(emptied.deleted.deliveries, 2);
  CAF_CHECK_EQUAL(emptied.kept.events, 4);
  CAF_CHECK_EQUAL(emptied.kept.deliveries, 1);
  CAF_CHECK_EQUAL(ids_of(names.events),
                  (std::set<int64_t>{e_open, e_failed, e_quarantined, e_set_aside}));
  auto places = must_exec(db, "SELECT string_agg(event_id::text, ',') FROM "
                                + names.events + "_unrouted");
  CAF_CHECK_EQUAL(places.text(0, 0), std::to_string(e_set_aside));
  CAF_CHECK_EQUAL(ids_of(names.deliveries + "_completed"),
                  (std::set<int64_t>{l_young}));
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + partition).int64(0, 0), 0);
  // The moves are updates, not deletes: the deliveries of a moved event
  // are all still there.
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.deliveries)
                    .int64(0, 0),
                  rows_before);
  CAF_CHECK(ids_of(names.deliveries).count(failed) == 1);
}

// prune deletes the log's rows past its window one by one, by their
// physical address, which is a partition's own: the same address names a
// row in each partition of the ring.
CAF_TEST(prune deletes old log rows of one partition and no young row of another) {
  auto at = [&](int bucket, int64_t id, double hours) {
    must_exec(db, "INSERT INTO " + names.deliveries
                    + "_completed (id, event_id, job, queue, attempts, created_at,"
                      " completed_at, bucket) VALUES ($1, $1, 'J', 'q', 0, now(),"
                      " now() - make_interval(secs => $2), $3)",
              {std::to_string(id), std::to_string(hours * 3600), std::to_string(bucket)});
  };
  at(0, 1, 5); // old: first rows of partition 0
  at(0, 2, 5);
  at(1, 3, 0); // young: first rows of partition 1, the same addresses
  at(1, 4, 0);
  must_exec(db, "UPDATE " + names.events + "_routing SET position = 10");
  retention_repository retention{names};
  auto gone = retention.delete_finished(db, delivery_status::completed, 3600, 2000,
                                        logged_completions::row_by_row);
  CAF_REQUIRE(gone);
  CAF_CHECK_EQUAL(gone->deliveries, 2);
  CAF_CHECK_EQUAL(ids_of(names.deliveries + "_completed"), (std::set<int64_t>{3, 4}));
}

CAF_TEST(one node leads retention at a time and a killed leader hands over) {
  std::map<std::string, uint16_t> http{{"a", free_port()}, {"b", free_port()}};
  std::map<std::string, std::unique_ptr<child_process>> nodes;
  for (auto& [name, port] : http)
    nodes[name] = sweeper_node(name, {"--http", "127.0.0.1:" + std::to_string(port)});
  auto leads = [&](const std::string& name) {
    return mentions(log_of(name), "event=retention_leader");
  };
  // While both run, through ten passes of each, one session holds the lock
  // and only one node ever said it leads.
  int64_t most_holders = 0;
  CAF_CHECK(wait_until([&] {
    most_holders = std::max(most_holders, lock_holders());
    return retention_passes(http["a"]) >= 10 && retention_passes(http["b"]) >= 10;
  }, std::chrono::seconds{60}));
  CAF_CHECK_EQUAL(most_holders, 1);
  CAF_CHECK_EQUAL(lock_holders(), 1);
  CAF_REQUIRE_NOT_EQUAL(leads("a"), leads("b"));
  std::string leader = leads("a") ? "a" : "b", standby = leads("a") ? "b" : "a";
  add_old_completed(20);
  CAF_CHECK(wait_until([&] { return ids_of(names.deliveries).empty(); }));
  // The node logs the batch after its commit: the rows can be gone a
  // moment before the line is written.
  CAF_CHECK(wait_until([&] {
    return mentions(log_of(leader), "event=retention_batch deliveries=20");
  }, std::chrono::seconds{10}));
  CAF_CHECK(!mentions(log_of(standby), "event=retention_batch"));
  // Another outbox in the same database has a lock of its own.
  {
    auto other = connect_db();
    retention_repository elsewhere{names.with_prefix("other_")};
    auto took = elsewhere.try_lead(other);
    CAF_REQUIRE(took);
    CAF_CHECK(*took);
  }
  // kill -9: no goodbye; PostgreSQL ends the session when its socket
  // closes, and the standby's next try takes the lock.
  auto killed_at = std::chrono::steady_clock::now();
  nodes[leader]->signal(SIGKILL);
  nodes[leader]->wait();
  CAF_CHECK(wait_until([&] { return leads(standby); }, std::chrono::seconds{15}));
  auto handover = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                                - killed_at).count();
  CAF_MESSAGE("the lead changed hands " << handover << " s after the SIGKILL");
  CAF_CHECK_LESS(handover, 10.0);
  CAF_CHECK_EQUAL(lock_holders(), 1);
  add_old_completed(5);
  CAF_CHECK(wait_until([&] { return ids_of(names.deliveries).empty(); }));
  // As above: the line follows the batch's commit.
  CAF_CHECK(wait_until([&] {
    return mentions(log_of(standby), "event=retention_batch deliveries=5");
  }, std::chrono::seconds{10}));
  nodes[standby]->signal(SIGTERM);
  CAF_CHECK_EQUAL(nodes[standby]->wait(), 0);
  CAF_CHECK(wait_until([&] { return lock_holders() == 0; }, std::chrono::seconds{10}));
}

CAF_TEST(retention false keeps every delivery and runs no retention actor) {
  write_config_file(config_path, R"({"e": [{"job": "J", "queue": "q"}]})", 100,
                    R"("retentionHours": false, )");
  add_old_completed(3);
  auto http = free_port();
  auto node = sweeper_node("off", {"--http", "127.0.0.1:" + std::to_string(http)});
  // Five sweeper passes later nothing was deleted and nobody took the lock.
  CAF_CHECK(wait_until([&] { return passes_of(http, "sweeper") >= 5; }));
  CAF_CHECK_EQUAL(ids_of(names.deliveries).size(), 3u);
  CAF_CHECK_EQUAL(lock_holders(), 0);
  CAF_CHECK_EQUAL(passes_of(http, "retention"), -1); // no such actor
  CAF_CHECK(!mentions(log_of("off"), "event=retention"));
  node->signal(SIGTERM);
  CAF_CHECK_EQUAL(node->wait(), 0);
}

CAF_TEST(the migration gives the tables autovacuum settings of a queue) {
  auto options = [&](const std::string& table) {
    return must_exec(db, "SELECT array_to_string(reloptions, ',') FROM pg_class"
                         " WHERE oid = $1::regclass", {table}).text(0, 0);
  };
  // The rows are in the tables' partitions: the deliveries' two
  // (schema/021), the ring's four of the events and of the completion log
  // (schema/022).
  std::vector<std::string> tables{names.deliveries + "_logged",
                                  names.deliveries + "_handed"};
  for (int p = 0; p < 4; ++p) {
    tables.push_back(names.events + "_p" + std::to_string(p));
    tables.push_back(names.deliveries + "_completed_p" + std::to_string(p));
  }
  for (auto& table : tables) {
    auto set = options(table);
    CAF_MESSAGE(table << ": " << set);
    CAF_CHECK(mentions(set, "autovacuum_vacuum_scale_factor=0.02"));
    CAF_CHECK(mentions(set, "autovacuum_vacuum_threshold=1000"));
    CAF_CHECK(mentions(set, "autovacuum_vacuum_insert_scale_factor=0.02"));
    CAF_CHECK(mentions(set, "autovacuum_vacuum_insert_threshold=1000"));
  }
  CAF_CHECK(mentions(options(names.deliveries + "_logged"), "fillfactor=90"));
}

CAF_TEST_FIXTURE_SCOPE_END()
