#include "core/pg/key_release.hpp"

#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

constexpr const char* release_sql = R"sql(
SELECT {{deliveries}}_release_deliveries($1::bigint[])
)sql";

// The first waiting delivery of each ordered key, where no delivery holds
// the key (the function checks again under the key's lock).
constexpr const char* stuck_sql = R"sql(
SELECT {{deliveries}}_release_deliveries(ARRAY(
  SELECT w.id FROM (
    SELECT DISTINCT ON (coalesce_key, job, queue) id, coalesce_key, job, queue
    FROM {{deliveries}}
    WHERE ordered AND status = 'pending' AND available_at IS NULL
    ORDER BY coalesce_key, job, queue, event_id) w
  WHERE NOT EXISTS (
    SELECT 1 FROM {{deliveries}} h
    WHERE h.coalesce_key = w.coalesce_key AND h.job = w.job
      AND h.queue = w.queue AND h.ordered
      AND (h.status = 'dispatched'
           OR (h.status = 'pending' AND h.available_at IS NOT NULL)
           OR (h.block_on_failure AND h.status IN ('failed', 'expired')
               AND h.skipped_at IS NULL)))
  LIMIT $1))
)sql";

} // namespace

key_release::key_release(const schema_names& names)
  : release_sql_(fill_names(release_sql, names)),
    stuck_sql_(fill_names(stuck_sql, names)) {
}

caf::expected<int64_t>
key_release::release(pg_connection& conn, const std::vector<int64_t>& ids) const {
  if (ids.empty())
    return 0;
  auto rows = conn.exec_prepared("release_keys", release_sql_,
                                 {pg_int_array(ids)});
  if (!rows)
    return rows.error();
  return rows->size();
}

caf::expected<int64_t> key_release::release_stuck(pg_connection& conn,
                                                  int32_t limit) const {
  auto rows = conn.exec_prepared("release_stuck_keys", stuck_sql_,
                                 {std::to_string(limit)});
  if (!rows)
    return rows.error();
  return rows->size();
}

} // namespace outbox
