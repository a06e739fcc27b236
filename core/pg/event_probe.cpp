#include "core/pg/event_probe.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <libpq-fe.h>

#include "core/pg/db_stores.hpp"

namespace outbox {

namespace {

// The newest events, by the primary key: new events take the newest ids,
// so a commit changes this window. A transaction that commits an id older
// than the whole window (a hundred newer events committed while it stayed
// open) is seen by the router itself, which looks at the gaps it passed
// again until they are settled (core/domain/routing_cursor.hpp).
constexpr int probe_window = 100;

// A probe must neither wait behind a lock on the events table (a migration,
// VACUUM FULL) nor on a connection whose server is gone: the watcher
// would stop waking the router and its node could not stop. Such a probe
// fails instead, and the watcher reconnects with backoff.
constexpr const char* probe_settings =
  "SET statement_timeout = '2s'; SET lock_timeout = '200ms'";
constexpr unsigned tcp_user_timeout_ms = 10000;

} // namespace

caf::expected<event_probe> event_probe::connect(const std::string& url,
                                                const schema_names& names) {
  auto conn = pg_connection::connect(url);
  if (!conn)
    return conn.error();
  // The probe has no parameters, so PostgreSQL plans it once, at the first
  // probe, and keeps that plan until the events table changes in the
  // catalog (VACUUM, ANALYZE, DDL, the ring's TRUNCATE). Made while the
  // table was counted empty (vacuumed while empty, as after a bulk
  // delete), that plan read and sorted every event at every probe: 6 to
  // 13 ms a probe with 20,000 events, the router woken that much later and
  // a share of a core spent on it (docs/performance.md, "The probe's
  // plan"). By index only, as the relay's other sessions plan, it walks
  // each partition's primary key backwards, whatever the table held.
  if (auto err = conn->exec_script("probe_settings", std::string{probe_settings}
                                                       + "; " + index_only_plan_settings))
    return err;
  // Sent data that the server does not acknowledge within this time ends
  // the connection (a half-open one would otherwise wait for minutes).
  int fd = PQsocket(conn->native());
  unsigned timeout = tcp_user_timeout_ms;
  if (fd >= 0)
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout, sizeof(timeout));
  return event_probe{std::move(*conn), sql(names)};
}

std::string event_probe::sql(const schema_names& names) {
  // The ids themselves, hashed: the newest id alone stays the same when an
  // older one of the window commits.
  return "SELECT md5(COALESCE(string_agg(id::text, ',' ORDER BY id), '')) FROM "
         "(SELECT id FROM " + names.events
         + " ORDER BY id DESC LIMIT "
         + std::to_string(probe_window) + ") u";
}

caf::expected<std::string> event_probe::read() {
  auto rows = conn_.exec_prepared("event_probe", sql_);
  if (!rows)
    return rows.error();
  return rows->text(0, 0);
}

} // namespace outbox
