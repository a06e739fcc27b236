#include "core/pg/key_admin_repository.hpp"

#include <map>

#include "core/pg/delivery_sql.hpp"
#include "core/pg/key_hold_sql.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// The earliest holding delivery of each ordered key (by the partial index
// {{deliveries}}_ordered_idx), kept where it blocks. Parked deliveries are
// in the index but hold nothing. Only `d` has the columns blocks_key_sql
// names bare.
std::string blocked_sql() {
  return std::string{"WITH heads AS ("
                     " SELECT DISTINCT ON (coalesce_key, job, queue) id AS head_id"
                     " FROM {{deliveries}} WHERE "}
         + ordered_index_sql + " AND NOT " + parked_sql
         + " AND ($1::text IS NULL OR queue = $1)"
           " ORDER BY coalesce_key, job, queue, event_id)"
           " SELECT d.id, d.event_id, d.coalesce_key, d.job, d.queue, d.status,"
           " d.attempts, COALESCE(d.last_error, ''),"
           " COALESCE(extract(epoch FROM d.finished_at)::bigint, 0),"
           " (SELECT count(*) FROM {{deliveries}} p"
           "  WHERE p.coalesce_key = d.coalesce_key AND p.job = d.job"
           "  AND p.queue = d.queue AND "
         + parked_sql
         + ")"
           " FROM heads h JOIN {{deliveries}} d ON d.id = h.head_id"
           " WHERE "
         + blocks_key_sql + " ORDER BY d.finished_at, d.id LIMIT $2";
}

// Guarded by the same test as the lock's verdict, so a row changed since
// is left alone. A failed head keeps the reason it failed.
std::string skip_sql() {
  return std::string{"UPDATE {{deliveries}} SET handed = false,"
                     " last_error = CASE WHEN status = 'failed' THEN last_error"
                     " ELSE 'skipped by an operator (was ' || status || ')' END,"
                     " status = 'failed', skipped_at = now(),"
                     " failed_at = COALESCE(failed_at, now()),"
                     " finished_at = COALESCE(finished_at, now()),"
                     " delivery_timeout_at = NULL"
                     " WHERE id = ANY($1::bigint[]) AND "}
         + holds_key_sql + " RETURNING id";
}

struct locked_row {
  delivery_status status;
  bool ordered, holds;
};

caf::expected<std::map<int64_t, locked_row>>
lock_rows(pg_connection& conn, const schema_names& names,
          const std::vector<int64_t>& ids) {
  auto rows = conn.exec(
    "skip_lock",
    fill_names(std::string{"SELECT id, status, ordered, "} + holds_key_sql
                 + " FROM {{deliveries}} WHERE id = ANY($1::bigint[])"
                   " ORDER BY id FOR UPDATE",
               names),
    {pg_int_array(ids)});
  if (!rows)
    return rows.error();
  std::map<int64_t, locked_row> out;
  for (int i = 0; i < rows->size(); ++i) {
    auto s = read_status(*rows, i, 1, "skip_lock");
    if (!s)
      return s.error();
    out[rows->int64(i, 0)] = {*s, rows->text(i, 2) == "t", rows->text(i, 3) == "t"};
  }
  return out;
}

} // namespace

key_admin_repository::key_admin_repository(schema_names names)
  : names_(std::move(names)), release_(names_) {
}

caf::expected<std::vector<blocked_key>>
key_admin_repository::blocked(pg_connection& conn,
                              const std::optional<std::string>& queue,
                              int32_t limit) {
  auto rows = conn.exec("list_blocked_keys", fill_names(blocked_sql(), names_),
                        {queue, std::to_string(limit)});
  if (!rows)
    return rows.error();
  std::vector<blocked_key> out;
  for (int i = 0; i < rows->size(); ++i) {
    blocked_key b;
    b.delivery_id = rows->int64(i, 0);
    b.event_id = rows->int64(i, 1);
    b.key = rows->text(i, 2);
    b.job = rows->text(i, 3);
    b.queue = rows->text(i, 4);
    auto status = read_status(*rows, i, 5, "list_blocked_keys");
    if (!status)
      return status.error();
    b.status = *status;
    b.attempts = static_cast<int32_t>(rows->int64(i, 6));
    b.last_error = rows->text(i, 7);
    b.since = rows->int64(i, 8);
    b.parked = rows->int64(i, 9);
    out.push_back(std::move(b));
  }
  return out;
}

caf::expected<std::vector<skip_outcome>>
key_admin_repository::skip(pg_connection& conn, const std::vector<int64_t>& ids) {
  return in_transaction<std::vector<skip_outcome>>(conn, [&]()
           -> caf::expected<std::vector<skip_outcome>> {
    auto locked = lock_rows(conn, names_, ids);
    if (!locked)
      return locked.error();
    std::vector<skip_outcome> out;
    std::vector<int64_t> skip;
    for (auto id : ids) {
      auto it = locked->find(id);
      if (it == locked->end())
        out.push_back({skip_verdict::unknown});
      else if (!it->second.ordered)
        out.push_back({skip_verdict::not_ordered});
      else if (!it->second.holds)
        out.push_back({skip_verdict::not_holding});
      else {
        out.push_back({skip_verdict::skipped, it->second.status});
        skip.push_back(id);
      }
    }
    if (skip.empty())
      return out;
    auto done = conn.exec("skip_update", fill_names(skip_sql(), names_),
                          {pg_int_array(skip)});
    if (!done)
      return done.error();
    if (auto released = release_.release(conn, skip); !released)
      return released.error();
    return out;
  });
}

} // namespace outbox
