#include "core/pg/migrations.hpp"

#include <cassert>

#include "core/base/errors.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// The record of applied migrations, with the names each was applied under.
std::string record_table_sql(const schema_names& n) {
  return "CREATE TABLE IF NOT EXISTS " + n.migrations
         + " (version integer PRIMARY KEY, name text NOT NULL,"
           " events_table text NOT NULL, deliveries_table text NOT NULL,"
           " publish_function text NOT NULL,"
           " applied_at timestamptz NOT NULL DEFAULT now())";
}

struct applied {
  int version;
  std::string events, deliveries, publish_function;
};

caf::expected<std::vector<applied>> read_record(pg_connection& conn,
                                                const schema_names& n) {
  auto rows = conn.exec("read_migrations",
                        "SELECT version, events_table, deliveries_table,"
                        " publish_function FROM "
                          + n.migrations + " ORDER BY version");
  if (!rows)
    return rows.error();
  std::vector<applied> out;
  for (int i = 0; i < rows->size(); ++i)
    out.push_back({static_cast<int>(rows->int64(i, 0)), rows->text(i, 1),
                   rows->text(i, 2), rows->text(i, 3)});
  return out;
}

caf::error check_names(const std::vector<applied>& record, const schema_names& n) {
  for (auto& a : record)
    if (a.events != n.events || a.deliveries != n.deliveries
        || a.publish_function != n.publish_function)
      return make_error(
        errc::schema_mismatch,
        "the schema in " + n.migrations + " was migrated with eventsTableName \""
          + a.events + "\", deliveriesTableName \"" + a.deliveries
          + "\", publishFunctionName \"" + a.publish_function
          + "\" but the config says \"" + n.events + "\", \"" + n.deliveries
          + "\", \"" + n.publish_function
          + "\": renaming is the application's own migration");
  return caf::none;
}

caf::expected<bool> record_exists(pg_connection& conn, const schema_names& n) {
  auto rows = conn.exec("find_migrations_table",
                        "SELECT to_regclass($1) IS NOT NULL", {n.migrations});
  if (!rows)
    return rows.error();
  return rows->text(0, 0) == "t";
}

caf::expected<int> apply_missing(pg_connection& conn, const schema_names& names,
                                 int up_to) {
  // One migrator at a time; others wait here and then find nothing to do.
  if (auto rows = conn.exec("lock_migrations",
                            "SELECT pg_advisory_xact_lock(hashtext($1))",
                            {names.migrations});
      !rows)
    return rows.error();
  if (auto err = conn.exec_script("create_migrations_table",
                                  record_table_sql(names)))
    return err;
  auto record = read_record(conn, names);
  if (!record)
    return record.error();
  if (auto err = check_names(*record, names))
    return err;
  int ran = 0;
  for (auto& m : migrations()) {
    bool done = false;
    for (auto& a : *record)
      done = done || a.version == m.version;
    if (done || m.version > up_to)
      continue;
    if (auto err = conn.exec_script(m.name, render_migration(m, names)))
      return err;
    auto rows = conn.exec("record_migration",
                          "INSERT INTO " + names.migrations
                            + " (version, name, events_table, deliveries_table,"
                              " publish_function) VALUES ($1, $2, $3, $4, $5)",
                          {std::to_string(m.version), std::string{m.name},
                           names.events, names.deliveries,
                           names.publish_function});
    if (!rows)
      return rows.error();
    ++ran;
  }
  return ran;
}

} // namespace

std::string render_migration(const migration& m, const schema_names& names) {
  // Identifiers cannot be statement parameters; they are validated instead.
  assert(check_identifier(names.events).empty());
  assert(check_identifier(names.deliveries).empty());
  assert(check_identifier(names.publish_function).empty());
  return fill_names(m.sql, names);
}

caf::expected<int> migrate(pg_connection& conn, const schema_names& names,
                           int up_to) {
  for (auto* name : {&names.events, &names.deliveries, &names.migrations,
                     &names.publish_function})
    if (auto rule = check_identifier(*name); !rule.empty())
      return make_error(errc::config_invalid,
                        "name \"" + *name + "\" " + rule);
  return in_transaction<int>(conn,
                            [&] { return apply_missing(conn, names, up_to); });
}

caf::error check_schema(pg_connection& conn, const schema_names& names) {
  auto exists = record_exists(conn, names);
  if (!exists)
    return exists.error();
  if (!*exists)
    return make_error(errc::schema_mismatch,
                      "no migrations applied (table " + names.migrations
                        + " is missing): run outboxctl migrate");
  auto record = read_record(conn, names);
  if (!record)
    return record.error();
  if (auto err = check_names(*record, names))
    return err;
  if (record->size() < migrations().size())
    return make_error(errc::schema_mismatch,
                      std::to_string(migrations().size() - record->size())
                        + " migration(s) not applied: run outboxctl migrate");
  return caf::none;
}

caf::error drop_schema(pg_connection& conn, const schema_names& n) {
  return conn.exec_script(
    "drop_schema",
    "DROP TABLE IF EXISTS " + n.deliveries + ", " + n.deliveries
      + "_completed, " + n.deliveries + "_paused, " + n.deliveries
      + "_late, " + n.deliveries + "_handed_alive, " + n.events + ", "
      + n.events + "_routing, " + n.events + "_unrouted, " + n.events + "_ring, "
      + n.migrations + " CASCADE;"
      + " DROP FUNCTION IF EXISTS " + n.publish_function
      + "(text, text, text, bigint, jsonb, timestamptz, text);"
      + " DROP FUNCTION IF EXISTS " + n.events + "_notify() CASCADE;"
      + " DROP FUNCTION IF EXISTS " + n.publish_function
      + "_check_headers() CASCADE;"
      + " DROP AGGREGATE IF EXISTS " + n.events + "_merge_patch_agg(jsonb);"
      + " DROP FUNCTION IF EXISTS " + n.events + "_merge_patch(jsonb, jsonb);"
      + " DROP FUNCTION IF EXISTS " + n.events + "_mark_inserting() CASCADE;"
      + " DROP FUNCTION IF EXISTS " + n.events + "_delete_deliveries() CASCADE;"
      + " DROP FUNCTION IF EXISTS " + n.events + "_truncate_deliveries() CASCADE;"
      + " DROP FUNCTION IF EXISTS " + n.deliveries
      + "_complete_ordered(bigint[], text[], text[]);"
      + " DROP FUNCTION IF EXISTS " + n.events + "_ring_slot();"
      + " DROP FUNCTION IF EXISTS " + n.events + "_ring_span();"
      + " DROP FUNCTION IF EXISTS " + n.deliveries + "_end_late(text[]);"
      + " DROP FUNCTION IF EXISTS " + n.deliveries + "_expire_late(integer);"
      + " DROP FUNCTION IF EXISTS " + n.deliveries
      + "_release_deliveries(bigint[]);"
      + " DROP FUNCTION IF EXISTS " + n.deliveries
      + "_release_keys(text[], text[], text[]);");
}

} // namespace outbox
