#include "core/pg/event_probe.hpp"

namespace outbox {

namespace {

// The newest unrouted events: new events take the newest ids, so a commit
// changes this window even when older events stay unrouted (types without
// routes, a backlog the router works through by itself). A transaction
// that commits an id older than the whole window (a hundred newer events
// committed while it stayed open) is seen by the router's own timer
// (--sleep) instead. The window bounds each probe's cost: it reads at most
// this many index entries and rows, however many events wait unrouted.
constexpr int probe_window = 100;

} // namespace

caf::expected<event_probe> event_probe::connect(const std::string& url,
                                                const schema_names& names) {
  auto conn = pg_connection::connect(url);
  if (!conn)
    return conn.error();
  return event_probe{std::move(*conn), sql(names)};
}

std::string event_probe::sql(const schema_names& names) {
  // The sum as numeric: a thousand large ids overflow a bigint.
  return "SELECT count(*)::text || ':' || COALESCE(sum(id), 0)::text FROM (SELECT id FROM "
         + names.events + " WHERE routed_at IS NULL ORDER BY id DESC LIMIT "
         + std::to_string(probe_window) + ") u";
}

caf::expected<std::string> event_probe::read() {
  auto rows = conn_.exec_prepared("event_probe", sql_);
  if (!rows)
    return rows.error();
  return rows->text(0, 0);
}

} // namespace outbox
