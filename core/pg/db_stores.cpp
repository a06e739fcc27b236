#include "core/pg/db_stores.hpp"

#include "core/base/errors.hpp"

namespace outbox {

// Plans must not depend on statistics, which are stale for queue-like
// tables most of the time (each ANALYZE saw one moment of a table whose rows
// change state within milliseconds), nor on the table sizes when a generic
// plan was fixed.
//
// Routing may only go by index: statistics taken while only events without
// routes came in can make even a fresh plan read the whole events table to
// find the few above the routing cursor. A bitmap scan is excluded too: a
// plain index scan in id order stops after the batch, a bitmap scan reads
// every entry it matches first.
//
// The delivery stores go by index only as well, which makes cached plans
// safe: a generic plan fixed while the table was nearly empty would keep,
// say, the results' lock by primary key on a sequential scan, and
// re-planning every statement instead costs the database more CPU per
// delivery. Each statement has an index that fits (primary key, ready,
// timeout, expiry); tests/integration/query_plans checks them, and
// docs/performance.md has the measurements.
//
// JIT is off: a plan that must read a table whole (the id sequence, which
// the routing horizon reads, has no other way) is priced at 10^10 with the
// sequential scan switched off, far above jit_above_cost, and PostgreSQL
// then compiled that statement at every execution: 30 to 50 ms of each
// routing transaction (found by the benchmark's commit→dispatched split,
// docs/performance.md). The relay's statements are short; none gains from it.
const char* const index_only_plan_settings
  = "SET enable_seqscan = off; SET enable_bitmapscan = off; SET jit = off";

std::string relay_session_settings(commit_mode mode) {
  std::string commit = mode == commit_mode::relay_progress
                         ? "SET synchronous_commit = off; "
                         : "SET synchronous_commit = on; ";
  // Handing an ordered key on reads what other transactions committed
  // after it took the key's lock (schema/011_key_ordering.sql): a role or
  // database default of repeatable read must not apply to the relay.
  return commit + "SET default_transaction_isolation = 'read committed'; "
         + index_only_plan_settings;
}

// The routing statement and the look join partitioned tables (the events'
// ring, the deliveries' handed and logged partitions). PostgreSQL found
// each execution's own plan cheaper than the generic one and so planned
// both anew at every routing pass: 2 ms of planning for 0.7 ms of running
// the routing statement, 0.9 for 0.1 the look (pg_stat_statements over a
// tools/bench run), which made the routing transaction 8 ms long instead
// of 2, and commit→published with it (docs/performance.md, "Plans made
// once"). With sequential and bitmap scans off, and the statements' shapes
// in routing_sql.hpp (the look reads the events above the cursor in one
// index scan; each lookup stays a lookup per row, OFFSET 0), their generic
// plans go by index whatever the tables' size when they were made
// (tests/integration/query_plans, on plans made on empty tables).
std::string routing_session_settings() {
  return relay_session_settings(commit_mode::relay_progress)
         + "; SET plan_cache_mode = force_generic_plan";
}

db_routing_store::db_routing_store(std::string url, const schema_names& names,
                                   const std::vector<route>& routes,
                                   std::optional<ready_notify> notify)
  : session_(std::move(url), routing_session_settings()),
    repo_(names, routes, std::move(notify)) {
}

caf::expected<routing_result>
db_routing_store::route_batch(int32_t n, const std::vector<handoff_queue>& handoff) {
  return session_.run<routing_result>(
    [&](pg_connection& c) { return repo_.route_batch(c, n, handoff); });
}

db_delivery_store::db_delivery_store(std::string url, const schema_names& names,
                                     commit_mode mode)
  : session_(std::move(url), relay_session_settings(mode)), claims_(names),
    results_(names), sweeps_(names) {
}

caf::expected<claim_result>
db_delivery_store::claim_batch(const claim_request& request) {
  return session_.run<claim_result>(
    [&](pg_connection& c) { return claims_.claim_batch(c, request); });
}

caf::expected<apply_result>
db_delivery_store::apply_results(const std::vector<send_result>& rs) {
  return session_.run<apply_result>(
    [&](pg_connection& c) { return results_.apply_results(c, rs); });
}

caf::expected<sweep_result> db_delivery_store::sweep(const sweep_request& request) {
  return session_.run<sweep_result>(
    [&](pg_connection& c) { return sweeps_.sweep(c, request); });
}

caf::expected<claim_result>
db_delivery_store::fetch_handed(const std::vector<handed_delivery>& ds) {
  return session_.run<claim_result>(
    [&](pg_connection& c) { return claims_.fetch_handed(c, ds); });
}

caf::expected<int64_t>
db_delivery_store::release_handed(const std::vector<handed_delivery>& ds) {
  return session_.run<int64_t>(
    [&](pg_connection& c) { return claims_.release_handed(c, ds); });
}

// The counts are read on their own connection, one read at a time per
// database (actors/status.cpp): without a bound, a read that waits for a
// lock (a migration, a manual ALTER TABLE) would hold every later answer
// to the cached counts, however old they grow, until the lock is gone.
db_status_store::db_status_store(std::string url, const schema_names& names,
                                 std::chrono::milliseconds read_timeout)
  : session_(std::move(url), "SET statement_timeout = "
                               + std::to_string(read_timeout.count())),
    repo_(names),
    read_timeout_(read_timeout) {
}

caf::expected<status_counts> db_status_store::read() {
  // A read: the first status request after a database restart answers
  // from a new connection instead of reporting the database unavailable.
  auto counts = session_.run_reconnecting<status_counts>(
    [&](pg_connection& c) { return repo_.read(c); });
  // 57014: the statement_timeout above cancelled the read (or an operator
  // did, pg_cancel_backend). Said plainly, with its likely causes, instead
  // of a bare SQLSTATE.
  if (!counts && sqlstate_of(counts.error()) == "57014") {
    auto ms = read_timeout_.count();
    auto bound = ms % 1000 == 0 ? std::to_string(ms / 1000) + " s"
                                : std::to_string(ms) + " ms";
    return make_error(errc::database_error,
                      "the status counts were not read within " + bound
                        + " (a lock on the outbox tables, or a slow read), or"
                          " the read was cancelled; the next request reads"
                          " again");
  }
  return counts;
}

} // namespace outbox
