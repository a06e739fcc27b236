#include "core/pg/key_release.hpp"

#include "core/pg/delivery_sql.hpp"
#include "core/pg/key_hold_sql.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

constexpr const char* release_sql = R"sql(
SELECT {{deliveries}}_release_deliveries($1::bigint[])
)sql";

// The first waiting delivery of each ordered key, where no delivery holds
// the key (the function checks again under the key's lock).
constexpr const char* stuck_sql = R"sql(
SELECT w.id FROM (
    SELECT DISTINCT ON (coalesce_key, job, queue) id, coalesce_key, job, queue
    FROM {{deliveries}}
    WHERE ordered AND status = 'pending' AND available_at IS NULL
    ORDER BY coalesce_key, job, queue, event_id) w
  WHERE NOT EXISTS (
    SELECT 1 FROM {{deliveries}} h
    WHERE h.coalesce_key = w.coalesce_key AND h.job = w.job
      AND h.queue = w.queue AND {{holds_key}})
LIMIT $1
)sql";

} // namespace

key_release::key_release(const schema_names& names)
  : release_sql_(fill_names(release_sql, names)),
    stuck_sql_(fill_names(stuck_sql, names)) {
  // Bare column names: only h has them in that sub-select.
  fill_slot(stuck_sql_, "{{holds_key}}", holds_key_sql);
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

caf::expected<std::vector<int64_t>>
key_release::stuck(pg_connection& conn, int32_t limit) const {
  auto rows = conn.exec_prepared("stuck_keys", stuck_sql_,
                                 {std::to_string(limit)});
  if (!rows)
    return rows.error();
  std::vector<int64_t> ids;
  for (int i = 0; i < rows->size(); ++i)
    ids.push_back(rows->int64(i, 0));
  return ids;
}

} // namespace outbox
