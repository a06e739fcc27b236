// Recovery of the handed deliveries after a crash of PostgreSQL
// (schema/021_unlogged_handed.sql): their partition is unlogged, so the
// crash emptied it, and the sends they stood for must be made again.
#include "core/pg/routing_repository.hpp"

#include "core/base/logging.hpp"
#include "core/pg/pg_connection.hpp"
#include "core/pg/routing_sql.hpp"

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
    // PostgreSQL's own choice of plans for this transaction, as before the
    // routing session made them generic (db_stores.cpp): it plans the
    // recovery's lookups in the completion log for the ids at hand.
    if (auto err = conn.exec_script("recovery_plans", routing_detail::plans_by_values_sql))
      return err;
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
    int64_t events = 0, skipped = 0;
    auto add = [&](const routing_result& routed) {
      out.deliveries_created += routed.deliveries_created;
      for (auto& [queue, n] : routed.per_queue)
        out.per_queue[queue] += n;
    };
    // Each chunk under a savepoint: one that fails on some row's data (a
    // route changed since, say) is routed again an event at a time, and an
    // event that fails alone is left out with an error line. It was routed
    // before; it must not keep every other lost send, and all routing, back.
    auto in_savepoint = [&](const std::vector<int64_t>& some)
      -> caf::expected<std::optional<routing_result>> {
      if (auto sp = conn.exec("handed_recovery_savepoint", "SAVEPOINT handed_recovery");
          !sp)
        return sp.error();
      auto routed = route_ids(conn, some, true);
      if (!routed && !is_data_error(routed.error()))
        return routed.error();
      auto end = conn.exec("handed_recovery_savepoint_end",
                           routed ? "RELEASE SAVEPOINT handed_recovery"
                                  : "ROLLBACK TO SAVEPOINT handed_recovery");
      if (!end)
        return end.error();
      if (!routed)
        return std::optional<routing_result>{};
      return std::optional<routing_result>{std::move(*routed)};
    };
    auto route_chunk = [&]() -> caf::error {
      if (ids.empty())
        return caf::none;
      auto chunk = in_savepoint(ids);
      if (!chunk)
        return chunk.error();
      if (*chunk) {
        add(**chunk);
      } else {
        for (auto id : ids) {
          auto one = in_savepoint({id});
          if (!one)
            return one.error();
          if (*one) {
            add(**one);
            continue;
          }
          ++skipped;
          logger("router")->error("event=handed_recovery_skipped outboxEventId={} "
                                  "reason=routing_failed_on_its_data",
                                  id);
        }
      }
      events += static_cast<int64_t>(ids.size());
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
                           "events={} deliveries={} skipped={}",
                           *stored.handed_floor, stored.stored.scanned, events,
                           out.deliveries_created, skipped);
  }
  auto alive = conn.exec_prepared("routing_handed_alive", handed_alive_sql_);
  if (!alive)
    return alive.error();
  return out;
}

} // namespace outbox
