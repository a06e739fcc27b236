#include "core/pg/admin_repository.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/pg/delivery_sql.hpp"
#include "core/pg/key_hold_sql.hpp"
#include "core/pg/key_release.hpp"
#include "core/pg/pg_connection.hpp"
#include "core/pg/retention_repository.hpp"

namespace outbox {

admin_repository::admin_repository(schema_names names) : names_(std::move(names)) {
}

namespace {

// The columns read_delivery_rows reads.
constexpr const char* delivery_columns =
  "SELECT d.id, d.event_id, e.event_type, COALESCE(e.key, ''), d.job,"
  " d.queue, d.status, COALESCE(d.last_error, ''), d.attempts,"
  " extract(epoch FROM d.created_at)::bigint,"
  " COALESCE(extract(epoch FROM d.finished_at)::bigint, 0)"
  " FROM {{deliveries}} d JOIN {{events}} e ON e.id = d.event_id";

// The same columns of the completion log's rows (whose event may be gone).
constexpr const char* logged_columns =
  "SELECT l.id, l.event_id, COALESCE(e.event_type, ''), COALESCE(e.key, ''),"
  " l.job, l.queue, 'completed', '', l.attempts,"
  " extract(epoch FROM l.created_at)::bigint,"
  " extract(epoch FROM l.completed_at)::bigint"
  " FROM {{deliveries}}_completed l LEFT JOIN {{events}} e ON e.id = l.event_id";

caf::expected<std::vector<delivery_row>>
read_delivery_rows(const pg_rows* rows, const char* statement) {
  std::vector<delivery_row> out;
  for (int i = 0; i < rows->size(); ++i) {
    delivery_row r;
    r.delivery_id = rows->int64(i, 0);
    r.event_id = rows->int64(i, 1);
    r.event_type = rows->text(i, 2);
    r.key = rows->text(i, 3);
    r.job = rows->text(i, 4);
    r.queue = rows->text(i, 5);
    auto status = read_status(*rows, i, 6, statement);
    if (!status)
      return status.error();
    r.status = *status;
    r.last_error = rows->text(i, 7);
    r.attempts = static_cast<int32_t>(rows->int64(i, 8));
    r.created_at = rows->int64(i, 9);
    r.finished_at = rows->int64(i, 10);
    out.push_back(std::move(r));
  }
  return out;
}

} // namespace

caf::expected<std::vector<delivery_row>>
admin_repository::list(pg_connection& conn, delivery_status status,
                       const std::optional<std::string>& queue, int32_t limit) {
  std::string sql = std::string{delivery_columns}
                    + " WHERE d.status = $1 AND ($2::text IS NULL OR d.queue = $2)";
  // Completed deliveries are mostly in the completion log (schema/016),
  // which has no index to order them by: a list of them reads it whole.
  if (status == delivery_status::completed)
    sql += std::string{" UNION ALL "} + logged_columns
           + " WHERE ($2::text IS NULL OR l.queue = $2)";
  auto rows = conn.exec(
    "list_deliveries", fill_names(sql + " ORDER BY 1 DESC LIMIT $3", names_),
    {std::string{to_string(status)}, queue, std::to_string(limit)});
  if (!rows)
    return rows.error();
  return read_delivery_rows(&*rows, "list_deliveries");
}

caf::expected<std::vector<delivery_row>>
admin_repository::list_quarantined_deliveries(pg_connection& conn, int32_t limit) {
  // By the index of the deliveries that gave up (schema/005).
  auto rows = conn.exec(
    "list_quarantined_deliveries",
    fill_names(std::string{delivery_columns}
                 + " WHERE d.status = 'failed' AND d.last_error LIKE 'quarantined:%'"
                   " ORDER BY d.id DESC LIMIT $1",
               names_),
    {std::to_string(limit)});
  if (!rows)
    return rows.error();
  return read_delivery_rows(&*rows, "list_quarantined_deliveries");
}

caf::expected<std::vector<quarantined_event>>
admin_repository::list_quarantined_events(pg_connection& conn, int32_t limit) {
  auto rows = conn.exec(
    "list_quarantined_events",
    fill_names("SELECT id, event_type, COALESCE(quarantine_reason, ''),"
               " COALESCE(octet_length(key), -1),"
               " extract(epoch FROM created_at)::bigint,"
               " extract(epoch FROM quarantined_at)::bigint"
               " FROM {{events}} WHERE quarantined_at IS NOT NULL"
               " ORDER BY id DESC LIMIT $1",
               names_),
    {std::to_string(limit)});
  if (!rows)
    return rows.error();
  std::vector<quarantined_event> out;
  for (int i = 0; i < rows->size(); ++i)
    out.push_back({rows->int64(i, 0), rows->text(i, 1), rows->text(i, 2),
                   rows->int64(i, 3), rows->int64(i, 4), rows->int64(i, 5)});
  return out;
}

caf::expected<std::vector<admin_verdict>>
admin_repository::discard(pg_connection& conn, const std::vector<int64_t>& ids) {
  auto rows = conn.exec(
    "discard_events",
    fill_names("DELETE FROM {{events}} WHERE id = ANY($1::bigint[])"
               " AND quarantined_at IS NOT NULL RETURNING id",
               names_),
    {pg_int_array(ids)});
  if (!rows)
    return rows.error();
  std::set<int64_t> gone;
  for (int i = 0; i < rows->size(); ++i)
    gone.insert(rows->int64(i, 0));
  std::vector<admin_verdict> out;
  for (auto id : ids)
    out.push_back(gone.count(id) ? admin_verdict::done : admin_verdict::unknown);
  return out;
}

namespace {

// A delivery of an ordered key is parked, not made ready: another one of
// its key may hold the key (a retried non-head), and only release_keys
// hands a key on. The caller releases the keys of those it parked in the
// same transaction: a retried blocked head is the key's earliest waiting
// delivery, so it goes at once.
const char* retry_set = " SET handed = false, status = 'pending', attempts = 0,"
                        " available_at = CASE WHEN ordered THEN NULL ELSE now() END,"
                        " skipped_at = NULL,"
                        " dispatch_id = NULL, dispatched_at = NULL,"
                        " delivery_timeout_at = NULL, completed_at = NULL,"
                        " failed_at = NULL, finished_at = NULL";

// The ordered ones among the rows of a retry's RETURNING id, ordered.
std::vector<int64_t> ordered_ids(const pg_rows& rows) {
  std::vector<int64_t> out;
  for (int i = 0; i < rows.size(); ++i)
    if (rows.text(i, 1) == "t")
      out.push_back(rows.int64(i, 0));
  return out;
}

} // namespace

caf::expected<std::vector<admin_verdict>>
admin_repository::retry(pg_connection& conn, const std::vector<int64_t>& ids) {
  return in_transaction<std::vector<admin_verdict>>(conn, [&]()
           -> caf::expected<std::vector<admin_verdict>> {
    auto current = conn.exec(
      "retry_lock",
      fill_names("SELECT id, status FROM {{deliveries}} WHERE id = ANY($1::bigint[])"
                 " ORDER BY id FOR UPDATE",
                 names_),
      {pg_int_array(ids)});
    if (!current)
      return current.error();
    std::map<int64_t, delivery_status> status;
    for (int i = 0; i < current->size(); ++i) {
      auto s = read_status(*current, i, 1, "retry_lock");
      if (!s)
        return s.error();
      status[current->int64(i, 0)] = *s;
    }
    std::vector<admin_verdict> out;
    std::vector<int64_t> retry;
    for (auto id : ids) {
      auto it = status.find(id);
      if (it == status.end())
        out.push_back(admin_verdict::unknown);
      else if (!is_retryable_by_operator(it->second))
        out.push_back(admin_verdict::wrong_status);
      else {
        out.push_back(admin_verdict::done);
        retry.push_back(id);
      }
    }
    if (!retry.empty()) {
      auto done = conn.exec("retry_update",
                            fill_names(std::string{"UPDATE {{deliveries}}"} + retry_set
                                         + " WHERE id = ANY($1::bigint[])"
                                           " AND status IN ('failed', 'expired')"
                                           " RETURNING id, ordered",
                                       names_),
                            {pg_int_array(retry)});
      if (!done)
        return done.error();
      if (auto r = key_release{names_}.release(conn, ordered_ids(*done)); !r)
        return r.error();
    }
    return out;
  });
}

caf::expected<int64_t>
admin_repository::retry_all(pg_connection& conn, delivery_status status,
                            const std::optional<std::string>& queue) {
  return in_transaction<int64_t>(conn, [&]() -> caf::expected<int64_t> {
    auto rows = conn.exec("retry_all",
                          fill_names(std::string{"UPDATE {{deliveries}}"} + retry_set
                                       + " WHERE status = $1 AND status IN"
                                         " ('failed', 'expired') AND ($2::text IS NULL"
                                         " OR queue = $2) RETURNING id, ordered",
                                     names_),
                          {std::string{to_string(status)}, queue});
    if (!rows)
      return rows.error();
    if (auto r = key_release{names_}.release(conn, ordered_ids(*rows)); !r)
      return r.error();
    return static_cast<int64_t>(rows->size());
  });
}

caf::expected<admin_verdict> admin_repository::forget(pg_connection& conn,
                                                      int64_t id) {
  return in_transaction<admin_verdict>(conn, [&]() -> caf::expected<admin_verdict> {
    auto current = conn.exec(
      "forget_lock",
      fill_names(std::string{"SELECT status, event_id, ordered, "} + blocks_key_sql
                   + ", COALESCE(coalesce_key, ''), job, queue FROM {{deliveries}}"
                     " WHERE id = $1 FOR UPDATE",
                 names_),
      {std::to_string(id)});
    if (!current)
      return current.error();
    if (current->size() == 0)
      return forget_logged(conn, id);
    auto status = read_status(*current, 0, 0, "forget_lock");
    if (!status)
      return status.error();
    if (!is_final(*status))
      return admin_verdict::not_final;
    auto event_id = current->text(0, 1);
    auto del = conn.exec("forget_delivery",
                         fill_names("DELETE FROM {{deliveries}} WHERE id = $1", names_),
                         {std::to_string(id)});
    if (!del)
      return del.error();
    auto ev = conn.exec("forget_event",
                        fill_names("DELETE FROM {{events}} e WHERE e.id = $1 AND NOT"
                                   " EXISTS (SELECT 1 FROM {{deliveries}} d WHERE"
                                   " d.event_id = e.id)",
                                   names_),
                        {event_id});
    if (!ev)
      return ev.error();
    // The row is gone: release_deliveries cannot find its key, so the key
    // is named (schema/011). Only a blocking row held the key, but a
    // release is idempotent, so any ordered one may.
    if (current->text(0, 2) == "t") {
      auto r = conn.exec("forget_release_key",
                         fill_names("SELECT {{deliveries}}_release_keys("
                                    "ARRAY[$1::text], ARRAY[$2::text], ARRAY[$3::text])",
                                    names_),
                         {current->text(0, 4), current->text(0, 5),
                          current->text(0, 6)});
      if (!r)
        return r.error();
    }
    return current->text(0, 3) == "t" ? admin_verdict::done_unblocked
                                      : admin_verdict::done;
  });
}

caf::expected<admin_verdict>
admin_repository::forget_logged(pg_connection& conn, int64_t id) {
  // By the log's BRIN index; the event goes once no delivery is left.
  auto rows = conn.exec(
    "forget_logged",
    fill_names("WITH gone AS (DELETE FROM {{deliveries}}_completed WHERE id = $1"
               " RETURNING event_id), events_gone AS (DELETE FROM {{events}} e"
               " WHERE e.id IN (SELECT event_id FROM gone) AND NOT EXISTS"
               " (SELECT 1 FROM {{deliveries}} d WHERE d.event_id = e.id))"
               " SELECT count(*) FROM gone",
               names_),
    {std::to_string(id)});
  if (!rows)
    return rows.error();
  return rows->int64(0, 0) > 0 ? admin_verdict::done : admin_verdict::unknown;
}

caf::expected<prune_result>
admin_repository::prune(pg_connection& conn, int64_t hours,
                        const std::vector<delivery_status>& statuses,
                        int32_t batch) {
  prune_result out;
  // The deletes of built-in retention, with the operator's window: each
  // batch is its own short transaction (autocommit), so the relay is never
  // blocked for long, and takes the events it leaves without deliveries.
  retention_repository retention{names_};
  for (auto status : statuses)
    for (;;) {
      auto rows = retention.delete_finished(conn, status, hours * 3600.0, batch,
                                            logged_completions::row_by_row);
      if (!rows)
        return rows.error();
      out.deliveries += rows->deliveries;
      out.events += rows->events;
      if (rows->deliveries < batch)
        break;
    }
  // Events left without deliveries otherwise (a delivery deleted by hand),
  // only with completed ones: the event of a delivery that completed into
  // the completion log (schema/016) has none left in the table either, and
  // goes with the completed ones, not with another status.
  bool with_completed = std::find(statuses.begin(), statuses.end(),
                                  delivery_status::completed)
                        != statuses.end();
  for (; with_completed;) {
    auto rows = conn.exec(
      "prune_events",
      // Routed ones only: at or below the routing cursor and not set aside.
      fill_names("DELETE FROM {{events}} WHERE id IN (SELECT e.id FROM {{events}} e"
                 " WHERE e.id <= (SELECT position FROM {{events}}_routing"
                 " WHERE name = 'cursor') AND e.quarantined_at IS NULL"
                 " AND e.created_at < now() -"
                 " make_interval(hours => $1::int) AND NOT EXISTS (SELECT 1 FROM"
                 " {{deliveries}} d WHERE d.event_id = e.id) AND NOT EXISTS"
                 " (SELECT 1 FROM {{events}}_unrouted u WHERE u.event_id = e.id)"
                 " LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING id",
                 names_),
      {std::to_string(hours), std::to_string(batch)});
    if (!rows)
      return rows.error();
    out.events += rows->size();
    if (rows->size() < batch)
      break;
  }
  std::vector<pg_param> st;
  for (auto s : statuses)
    st.emplace_back(to_string(s));
  auto kept = conn.exec(
    "prune_kept_blocking",
    fill_names(std::string{"SELECT count(*) FROM {{deliveries}} WHERE "} + blocks_key_sql
                 + " AND status = ANY($1::text[]) AND finished_at < now() -"
                   " make_interval(hours => $2::int)",
               names_),
    {pg_text_array(st), std::to_string(hours)});
  if (!kept)
    return kept.error();
  out.kept_blocking = kept->int64(0, 0);
  return out;
}

} // namespace outbox
