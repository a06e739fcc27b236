// Recovery of the handed deliveries after a crash of PostgreSQL
// (schema/021_unlogged_handed.sql): their partition is unlogged, so the
// crash emptied it, and the sends they stood for must be made again.
#include "core/pg/routing_repository.hpp"

#include "core/base/logging.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// Events per routing statement of a recovery: the statement takes the ids
// as one array parameter.
constexpr size_t recovery_chunk = 1000;

} // namespace

caf::expected<routing_result>
routing_repository::recover_handed(pg_connection& conn, const lead& stored) {
  routing_result out;
  if (stored.handed_floor && *stored.handed_floor <= stored.stored.scanned) {
    // Every event a handed delivery can have been made for: at or above the
    // floor, up to the scanned id, and not open (an open id is routed later,
    // by the cursor, as any other). Events above the stored cursor are
    // routed again by the cursor itself.
    auto rows = conn.exec_prepared("routing_recovery_look", recovery_look_sql_,
                                   {std::to_string(*stored.handed_floor),
                                    std::to_string(stored.stored.scanned)});
    if (!rows)
      return rows.error();
    std::vector<int64_t> ids;
    int64_t events = 0;
    auto route_chunk = [&]() -> caf::error {
      if (ids.empty())
        return caf::none;
      auto routed = route_ids(conn, ids, true);
      if (!routed)
        return routed.error();
      events += static_cast<int64_t>(ids.size());
      out.deliveries_created += routed->deliveries_created;
      for (auto& [queue, n] : routed->per_queue)
        out.per_queue[queue] += n;
      ids.clear();
      return caf::none;
    };
    for (int i = 0; i < rows->size(); ++i) {
      auto id = rows->int64(i, 0);
      if (stored.stored.open.count(id) > 0)
        continue;
      ids.push_back(id);
      if (ids.size() >= recovery_chunk)
        if (auto err = route_chunk())
          return err;
    }
    if (auto err = route_chunk())
      return err;
    logger("router")->warn("event=handed_deliveries_recovered floor={} scanned={} "
                           "events={} deliveries={}",
                           *stored.handed_floor, stored.stored.scanned, events,
                           out.deliveries_created);
  }
  auto alive = conn.exec_prepared("routing_handed_alive", handed_alive_sql_);
  if (!alive)
    return alive.error();
  return out;
}

} // namespace outbox
