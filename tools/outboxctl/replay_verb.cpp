#include "tools/outboxctl/replay_verb.hpp"

#include <iostream>

#include "core/domain/ready_notice.hpp"
#include "core/pg/pg_connection.hpp"
#include "core/pg/replay_repository.hpp"
#include "tools/outboxctl/admin_output.hpp"

namespace outbox {

namespace {

// The config's routes of the job and queue (several, one per event type).
std::vector<route> replayed_routes(const config& cfg, const replay_args& a) {
  std::vector<route> out;
  for (auto& r : cfg.routes)
    if (r.job == a.job && r.queue == a.queue)
      out.push_back(r);
  return out;
}

// 0 when PostgreSQL reads `text` as a time; else the exit code, after
// saying why not (2) or that the database failed (1).
int check_time(pg_connection& db, const std::string& flag,
               const std::string& text) {
  auto rows = db.exec("replay_check_time", "SELECT $1::timestamptz", {text});
  if (rows)
    return 0;
  if (is_data_error(rows.error()))
    return admin_usage(flag + ": \"" + text
                       + "\" is not a time (e.g. 2026-12-01, "
                         "\"2026-12-01 10:00:00+00\")");
  return admin_db_failed("replay", rows.error());
}

} // namespace

int run_replay_verb(const replay_args& a, const config& cfg) {
  if (a.job.empty() || a.queue.empty())
    return admin_usage("replay needs --job JOB and --queue QUEUE");
  auto routes = replayed_routes(cfg, a);
  if (routes.empty())
    return admin_usage("no route of the config sends job \"" + a.job
                       + "\" to queue \"" + a.queue + "\"");
  if (a.event_type) {
    bool routed = false;
    for (auto& r : routes)
      routed = routed || r.event_type == *a.event_type;
    if (!routed)
      return admin_usage("--event-type: no route sends events of type \""
                         + *a.event_type + "\" to that job and queue");
  }
  bool by_time = a.since.has_value();
  bool by_id = !a.event_ids.empty();
  if (by_time == by_id)
    return admin_usage("replay takes --since TIME [--until TIME] or --event "
                       "ID,..., one of them");
  if (a.until && !by_time)
    return admin_usage("--until goes with --since");
  replay_selection what;
  what.since = a.since;
  what.until = a.until;
  what.event_type = a.event_type;
  if (by_id) {
    auto ids = parse_ids(a.event_ids);
    if (!ids)
      return admin_usage("--event: ids must be positive integers");
    what.event_ids = std::move(*ids);
  }
  auto db = pg_connection::connect(cfg.database_url);
  if (!db)
    return admin_db_failed("replay", db.error());
  for (auto& [flag, value] : {std::pair{"--since", a.since}, std::pair{"--until", a.until}})
    if (value)
      if (int rc = check_time(*db, flag, *value); rc != 0)
        return rc;
  // The dispatchers of the queue hear of the new deliveries as of routed
  // ones (an origin of its own: no node skips it).
  replay_repository repo{cfg.names, routes,
                         ready_notify{cfg.names.ready_channel(), new_wake_origin()}};
  auto n = repo.replay(*db, what, a.dry_run);
  if (!n)
    return admin_db_failed("replay", n.error());
  auto target = "job " + a.job + " on queue " + a.queue;
  if (a.dry_run)
    std::cout << "dry run: " << n->events << " events match; "
              << n->events - n->skipped << " deliveries of " << target
              << " would be made, " << n->skipped
              << " events skipped (they still have one in the table)\n";
  else
    std::cout << "replayed " << n->created << " deliveries of " << target
              << " for " << n->events << " matching events; " << n->skipped
              << " skipped (they still have one in the table: outboxctl "
                 "retry sends a failed or expired one again)\n";
  return 0;
}

} // namespace outbox
