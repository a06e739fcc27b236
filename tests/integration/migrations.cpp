#define CAF_SUITE integration.migrations
#include <caf/test/unit_test.hpp>

#include "core/base/errors.hpp"
#include "core/pg/migrations.hpp"
#include "core/pg/routing_repository.hpp"
#include "core/pg/status_repository.hpp"
#include "tests/integration/test_services.hpp"

using namespace outbox;
using namespace outbox::testing;

CAF_TEST(migrating twice is a no op) {
  schema_fixture f;
  CAF_CHECK(!check_schema(f.db, f.names));
  auto again = migrate(f.db, f.names);
  CAF_REQUIRE(again);
  CAF_CHECK_EQUAL(*again, 0);
  auto n = must_exec(f.db, "SELECT count(*) FROM " + f.names.migrations);
  CAF_CHECK_EQUAL(n.int64(0, 0), static_cast<int64_t>(migrations().size()));
}

CAF_TEST(other table names than the applied ones are refused) {
  schema_fixture f;
  auto renamed = f.names;
  renamed.events = f.names.events + "_v2";
  auto ran = migrate(f.db, renamed);
  CAF_REQUIRE(!ran);
  CAF_CHECK(ran.error() == errc::schema_mismatch);
  CAF_CHECK_NOT_EQUAL(render(ran.error()).find("renaming is the application's own"),
                      std::string::npos);
  CAF_CHECK(check_schema(f.db, renamed) == errc::schema_mismatch);
  // Nothing of the refused run is left behind.
  auto t = must_exec(f.db, "SELECT to_regclass($1) IS NULL", {renamed.events});
  CAF_CHECK_EQUAL(t.text(0, 0), "t");
}

// Scripts (migrations, the benchmark's --schema-sql) may hold only
// comments: PostgreSQL answers those with an empty result, not an error.
CAF_TEST(a script of comments only runs nothing and fails nothing) {
  auto db = connect_db();
  CAF_CHECK(!db.exec_script("comments", "-- nothing to run\n/* nor here */"));
  CAF_CHECK(!db.exec_script("empty", ""));
  CAF_CHECK(db.exec_script("broken", "SELEKT 1") == errc::database_error);
  CAF_CHECK(db.ok());
}

CAF_TEST(an unmigrated database is reported as such) {
  auto db = connect_db();
  auto names = schema_names{}.with_prefix(unique_prefix());
  auto err = check_schema(db, names);
  CAF_CHECK(err == errc::schema_mismatch);
  CAF_CHECK_NOT_EQUAL(render(err).find("run outboxctl migrate"), std::string::npos);
}

CAF_TEST(the tables have every designed column) {
  schema_fixture f;
  auto cols = must_exec(f.db,
                        "SELECT string_agg(column_name, ',' ORDER BY column_name) "
                        "FROM information_schema.columns WHERE table_name = $1",
                        {f.names.deliveries});
  auto text = cols.text(0, 0);
  for (auto c : {"retry_delays", "repeat_last_delay", "delivery_timeout_seconds",
                 "merge", "dispatch_id", "available_at", "dispatched_at",
                 "delivery_timeout_at", "expires_at", "coalesce_key",
                 "payload_override", "superseded_by", "completed_at",
                 "failed_at", "last_error", "attempts"})
    CAF_CHECK_NOT_EQUAL(text.find(c), std::string::npos);
}

CAF_TEST(handed deliveries live in an unlogged partition of their own) {
  schema_fixture f;
  // The partitions and their persistence: 'p' the parent, 'u' unlogged.
  auto parts = must_exec(f.db,
                         "SELECT string_agg(c.relname::text || ':' || c.relpersistence::text,"
                         " ',' ORDER BY c.relname)"
                         " FROM pg_partition_tree($1::regclass) t"
                         " JOIN pg_class c ON c.oid = t.relid",
                         {f.names.deliveries})
                 .text(0, 0);
  CAF_CHECK_EQUAL(parts, f.names.deliveries + ":p," + f.names.deliveries
                           + "_handed:u," + f.names.deliveries + "_logged:p");
  auto marker = must_exec(f.db, "SELECT relpersistence, (SELECT count(*) FROM "
                                  + f.names.deliveries + "_handed_alive)"
                                  " FROM pg_class WHERE oid = $1::regclass",
                          {f.names.deliveries + "_handed_alive"});
  CAF_CHECK_EQUAL(marker.text(0, 0), "u");
  CAF_CHECK_EQUAL(marker.int64(0, 1), 1);
  // A row goes to the partition its flag names, and an update that clears
  // the flag moves it (what every transition of a handed send does).
  auto event = must_exec(f.db, "INSERT INTO " + f.names.events
                                 + " (event_type, payload) VALUES ('t', '{}')"
                                   " RETURNING id").text(0, 0);
  auto where = [&](const std::string& sql) {
    return must_exec(f.db, sql, {event}).text(0, 0);
  };
  CAF_CHECK_EQUAL(where("INSERT INTO " + f.names.deliveries
                        + " (event_id, job, queue, delivery_timeout_seconds,"
                          " status, handed) VALUES ($1, 'J', 'q', 30,"
                          " 'dispatched', true) RETURNING tableoid::regclass::text"),
                  f.names.deliveries + "_handed");
  CAF_CHECK_EQUAL(where("UPDATE " + f.names.deliveries
                        + " SET handed = false, status = 'pending'"
                          " WHERE event_id = $1 RETURNING tableoid::regclass::text"),
                  f.names.deliveries + "_logged");
}

CAF_TEST(dropping a schema leaves none of its functions behind) {
  auto db = connect_db();
  auto prefix = unique_prefix();
  auto names = schema_names{}.with_prefix(prefix);
  auto ran = migrate(db, names);
  CAF_REQUIRE(ran);
  CAF_REQUIRE(!drop_schema(db, names));
  auto left = must_exec(db, "SELECT count(*), string_agg(proname, ', ')"
                            " FROM pg_proc WHERE starts_with(proname, $1)",
                        {prefix});
  CAF_CHECK_EQUAL(left.int64(0, 0), 0);
  CAF_MESSAGE("left: " << left.text(0, 1));
}

// A delivery's insert takes no lock on its event (schema/017): the
// foreign key's check locked the event's row FOR KEY SHARE, a write to the
// event's page of its own. So another transaction may lock the event for
// update while the delivery's insert is still open.
CAF_TEST(a delivery insert locks nothing of its event) {
  schema_fixture f;
  auto event = must_exec(f.db, "INSERT INTO " + f.names.events
                                 + " (event_type, payload) VALUES ('t', '{}')"
                                   " RETURNING id").text(0, 0);
  CAF_REQUIRE(!f.db.exec_script("begin", "BEGIN"));
  must_exec(f.db, "INSERT INTO " + f.names.deliveries
                    + " (event_id, job, queue, delivery_timeout_seconds)"
                      " VALUES ($1, 'j', 'q', 30)",
            {event});
  auto other = connect_db();
  auto locked = other.exec("lock_event", "SELECT id FROM " + f.names.events
                                           + " WHERE id = $1 FOR UPDATE NOWAIT",
                           {event});
  CAF_CHECK(locked);
  if (locked)
    CAF_CHECK_EQUAL(locked->size(), 1);
  CAF_REQUIRE(!f.db.exec_script("commit", "COMMIT"));
}

// What the foreign key did besides: an event deleted by hand takes its
// deliveries along (a trigger of the deleting statement since 017), and
// nothing of another event.
CAF_TEST(an event deleted by hand takes its deliveries along) {
  schema_fixture f;
  auto events = must_exec(f.db, "INSERT INTO " + f.names.events
                                  + " (event_type, payload) SELECT 't', '{}'"
                                    " FROM generate_series(1, 3) RETURNING id");
  CAF_REQUIRE_EQUAL(events.size(), 3);
  for (int i = 0; i < 3; ++i)
    for (auto job : {"a", "b"})
      must_exec(f.db, "INSERT INTO " + f.names.deliveries
                        + " (event_id, job, queue, delivery_timeout_seconds)"
                          " VALUES ($1, $2, 'q', 30)",
                {events.text(i, 0), job});
  must_exec(f.db, "DELETE FROM " + f.names.events + " WHERE id IN ($1, $2)",
            {events.text(0, 0), events.text(2, 0)});
  auto left = must_exec(f.db, "SELECT count(*), min(event_id), max(event_id) FROM "
                                + f.names.deliveries);
  CAF_CHECK_EQUAL(left.int64(0, 0), 2);
  CAF_CHECK_EQUAL(left.text(0, 1), events.text(1, 0));
  CAF_CHECK_EQUAL(left.text(0, 2), events.text(1, 0));
  // TRUNCATE fires no delete trigger: one of its own takes them along.
  must_exec(f.db, "TRUNCATE " + f.names.events);
  CAF_CHECK_EQUAL(must_exec(f.db, "SELECT count(*) FROM " + f.names.deliveries).int64(0, 0), 0);
}

// Upgrade to routing by cursor (schema/015) on a database the relay of
// 014 used: what was unrouted is routed (or stays unrouted, for a type
// without routes), what was routed or quarantined is not routed again.
CAF_TEST(an upgrade to routing by cursor routes what was unrouted and nothing twice) {
  auto db = connect_db();
  auto names = schema_names{}.with_prefix(unique_prefix());
  auto before = migrate(db, names, 14);
  CAF_REQUIRE(before);
  CAF_REQUIRE_EQUAL(*before, 14);
  auto publish = [&](const std::string& type) {
    return must_exec(db, "SELECT " + names.publish_function + "($1, '{}')", {type})
      .int64(0, 0);
  };
  auto routed = publish("r");
  must_exec(db, "INSERT INTO " + names.deliveries
                  + " (event_id, job, queue, delivery_timeout_seconds)"
                    " VALUES ($1, 'J', 'q', 30)",
            {std::to_string(routed)});
  must_exec(db, "UPDATE " + names.events + " SET routed_at = now() WHERE id = $1",
            {std::to_string(routed)});
  auto a = publish("r");
  publish("nobody.listens");
  auto b = publish("r");
  auto quarantined = publish("r");
  must_exec(db, "UPDATE " + names.events
                  + " SET quarantined_at = now(), routed_at = now() WHERE id = $1",
            {std::to_string(quarantined)});
  auto after = migrate(db, names);
  CAF_REQUIRE(after);
  CAF_CHECK_EQUAL(*after, static_cast<int>(migrations().size()) - 14);
  status_repository status{names};
  auto unrouted = [&] {
    auto s = status.read(db);
    CAF_REQUIRE(s);
    return s->unrouted_events;
  };
  CAF_CHECK_EQUAL(unrouted(), 3);
  route r;
  r.event_type = "r";
  r.job = "J";
  r.queue = "q";
  routing_repository router{names, {r}};
  auto first = router.route_batch(db, 100);
  CAF_REQUIRE(first);
  CAF_CHECK_EQUAL(first->events_routed, 2);
  auto next = router.route_batch(db, 100);
  CAF_REQUIRE(next);
  CAF_CHECK_EQUAL(next->events_routed, 0);
  auto got = must_exec(db, "SELECT string_agg(event_id::text, ',' ORDER BY event_id)"
                           " FROM " + names.deliveries);
  CAF_CHECK_EQUAL(got.text(0, 0), std::to_string(routed) + "," + std::to_string(a)
                                    + "," + std::to_string(b));
  CAF_CHECK_EQUAL(unrouted(), 1); // the type without routes
  // New events after the upgrade are routed as usual.
  auto c = publish("r");
  auto last = router.route_batch(db, 100);
  CAF_REQUIRE(last);
  CAF_CHECK_EQUAL(last->events_routed, 1);
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.deliveries
                                  + " WHERE event_id = $1",
                            {std::to_string(c)})
                    .int64(0, 0),
                  1);
  CAF_REQUIRE(!drop_schema(db, names));
}

CAF_TEST(an upgrade to the ring keeps every row and id and routes on) {
  auto db = connect_db();
  auto names = schema_names{}.with_prefix(unique_prefix());
  auto before = migrate(db, names, 21);
  CAF_REQUIRE(before);
  CAF_REQUIRE_EQUAL(*before, 21);
  auto publish = [&](const std::string& payload) {
    return must_exec(db, "SELECT " + names.publish_function + "('r', $1)", {payload})
      .int64(0, 0);
  };
  auto a = publish("{\"n\": 1}");
  auto b = publish("{\"n\": 2}");
  must_exec(db, "INSERT INTO " + names.deliveries
                  + " (event_id, job, queue, delivery_timeout_seconds)"
                    " VALUES ($1, 'J', 'q', 30)",
            {std::to_string(a)});
  must_exec(db, "INSERT INTO " + names.deliveries
                  + "_completed (id, event_id, job, queue, attempts, created_at)"
                    " VALUES (7, $1, 'J', 'q', 1, now())",
            {std::to_string(b)});
  auto after = migrate(db, names);
  CAF_REQUIRE(after);
  CAF_CHECK_EQUAL(*after, static_cast<int>(migrations().size()) - 21);
  // The new sequence stands where the old one stood: the router reads the
  // last id issued (an uncalled sequence would read as none, a reset).
  auto seq = must_exec(db, "SELECT is_called, last_value FROM " + names.events
                             + "_id_seq");
  CAF_CHECK_EQUAL(seq.text(0, 0), "t");
  CAF_CHECK_EQUAL(seq.int64(0, 1), b);
  // Every row is in the partition of the slot the migration ran in, and
  // so is a new one (the span is 3 h), with the next id.
  auto where = [&](const std::string& table) {
    return must_exec(db, "SELECT string_agg(DISTINCT tableoid::regclass::text, ',')"
                         " FROM " + table).text(0, 0);
  };
  auto c = publish("{\"n\": 3}");
  CAF_CHECK_GREATER(c, b);
  auto slot = must_exec(db, "SELECT " + names.events + "_ring_slot()").text(0, 0);
  CAF_CHECK_EQUAL(where(names.events), names.events + "_p" + slot);
  CAF_CHECK_EQUAL(where(names.deliveries + "_completed"),
                  names.deliveries + "_completed_p" + slot);
  auto payloads = must_exec(db, "SELECT string_agg(payload, ',' ORDER BY id) FROM "
                                  + names.events);
  CAF_CHECK_EQUAL(payloads.text(0, 0), "{\"n\": 1},{\"n\": 2},{\"n\": 3}");
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.deliveries)
                    .int64(0, 0), 1);
  // The triggers moved to the parent: a bad header is refused on insert,
  // and a delete of an event takes its deliveries along.
  CAF_CHECK(!db.exec("bad_headers", "SELECT " + names.publish_function
                                      + "('r', '{}', p_headers => '{\"traceparent\": \"x\"}')"));
  must_exec(db, "DELETE FROM " + names.events + " WHERE id = $1", {std::to_string(a)});
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.deliveries)
                    .int64(0, 0), 0);
  CAF_REQUIRE(!drop_schema(db, names));
}

// Every name a migration makes from the longest table names the config
// takes (48 characters) is unique within PostgreSQL's 63 bytes, which
// shortens a longer name without a word.
CAF_TEST(the longest table names migrate and drop) {
  auto db = connect_db();
  auto prefix = unique_prefix();
  auto padded = [&](const std::string& what) {
    auto name = prefix + what;
    name.resize(max_identifier_length, 'x');
    return name;
  };
  schema_names names;
  names.events = padded("e");
  names.deliveries = padded("d");
  names.migrations = padded("m");
  names.publish_function = padded("f");
  auto ran = migrate(db, names);
  CAF_REQUIRE(ran);
  CAF_CHECK_EQUAL(*ran, static_cast<int>(migrations().size()));
  CAF_REQUIRE(!drop_schema(db, names));
  auto left = must_exec(db, "SELECT count(*) FROM pg_class WHERE starts_with(relname, $1)",
                        {prefix});
  CAF_CHECK_EQUAL(left.int64(0, 0), 0);
}
