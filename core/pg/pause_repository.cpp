#include "core/pg/pause_repository.hpp"

#include "core/pg/delivery_sql.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// A pause's columns as every statement here returns them.
constexpr const char* pause_columns = R"sql(
  queue, extract(epoch FROM now() - paused_at)::float8 AS paused_seconds,
  extract(epoch FROM paused_at)::bigint AS paused_at, paused_by, reason,
  coalesce(extract(epoch FROM resume_at - now())::float8, -1) AS ends_in)sql";

// A pause that is still in force: not ended by itself.
constexpr const char* in_force = "(resume_at IS NULL OR resume_at > now())";

std::string with_columns(std::string sql) {
  fill_slot(sql, "{{pause_columns}}", pause_columns);
  fill_slot(sql, "{{in_force}}", in_force);
  return sql;
}

queue_pause read_pause(const pg_rows& rows, int i) {
  queue_pause p;
  p.paused_seconds = std::stod(rows.text(i, 1));
  p.paused_at = rows.int64(i, 2);
  p.paused_by = rows.text(i, 3);
  p.reason = rows.text(i, 4);
  p.ends_in_seconds = std::stod(rows.text(i, 5));
  return p;
}

} // namespace

pause_repository::pause_repository(const schema_names& names)
  : pause_sql_(fill_names(
      with_columns("INSERT INTO {{deliveries}}_paused AS p"
                   " (queue, paused_by, reason, resume_at)"
                   " VALUES ($1, $2, $3, now() + make_interval(secs => $4::bigint))"
                   " ON CONFLICT (queue) DO UPDATE SET paused_at = now(),"
                   " paused_by = excluded.paused_by, reason = excluded.reason,"
                   " resume_at = excluded.resume_at"
                   " RETURNING {{pause_columns}}"),
      names)),
    resume_sql_(fill_names(
      with_columns("WITH gone AS (DELETE FROM {{deliveries}}_paused"
                   " WHERE queue = $1 RETURNING resume_at)"
                   " SELECT count(*) FILTER (WHERE {{in_force}}) FROM gone"),
      names)),
    paused_sql_(fill_names(
      with_columns("SELECT {{pause_columns}} FROM {{deliveries}}_paused"
                   " WHERE {{in_force}} ORDER BY queue"),
      names)) {
}

caf::expected<queue_pause>
pause_repository::pause(pg_connection& conn, const std::string& queue,
                        const std::string& by, const std::string& reason,
                        std::optional<int64_t> for_seconds) {
  auto rows = conn.exec("pause_queue", pause_sql_,
                        {queue, by, reason,
                         for_seconds ? pg_param{std::to_string(*for_seconds)}
                                     : pg_param{std::nullopt}});
  if (!rows)
    return rows.error();
  return read_pause(*rows, 0);
}

caf::expected<bool> pause_repository::resume(pg_connection& conn,
                                             const std::string& queue) {
  auto rows = conn.exec("resume_queue", resume_sql_, {queue});
  if (!rows)
    return rows.error();
  return rows->int64(0, 0) > 0;
}

caf::expected<std::map<std::string, queue_pause>>
pause_repository::paused(pg_connection& conn) {
  auto rows = conn.exec_prepared("paused_queues", paused_sql_);
  if (!rows)
    return rows.error();
  std::map<std::string, queue_pause> out;
  for (int i = 0; i < rows->size(); ++i)
    out[rows->text(i, 0)] = read_pause(*rows, i);
  return out;
}

} // namespace outbox
