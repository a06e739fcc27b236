#include "tools/outboxctl/admin_verbs.hpp"

#include <algorithm>
#include <iostream>

#include "core/pg/admin_repository.hpp"
#include "core/pg/pg_connection.hpp"
#include "core/pg/status_repository.hpp"
#include "tools/outboxctl/admin_output.hpp"
#include "tools/outboxctl/key_verbs.hpp"

namespace outbox {

namespace {

constexpr int exit_failure = admin_exit_failure;

int usage(const std::string& why) { return admin_usage(why); }

int db_failed(const std::string& verb, const caf::error& err) {
  return admin_db_failed(verb, err);
}

int list(pg_connection& db, admin_repository& repo, delivery_status listed,
         const admin_args& a) {
  auto limit = a.limit == not_given ? 100 : a.limit;
  if (limit < 1 || limit > 100000)
    return usage("--limit must be 1..100000");
  std::string status = to_string(listed);
  auto rows = repo.list(db, listed, a.queue, static_cast<int32_t>(limit));
  if (!rows)
    return db_failed(status, rows.error());
  if (rows->empty()) {
    std::cout << "no " << status << " deliveries"
              << (a.queue ? " in queue " + *a.queue : "") << "\n";
    return 0;
  }
  for (auto& r : *rows)
    std::cout << "delivery " << r.delivery_id << "  event " << r.event_id << "  "
              << r.event_type << (r.key.empty() ? "" : "  key " + r.key) << "\n"
              << "  job " << r.job << "  queue " << r.queue << "  attempts "
              << r.attempts << "\n"
              << "  created " << local_time(r.created_at) << "  " << status << " "
              << local_time(r.finished_at) << "\n"
              << "  last error: " << (r.last_error.empty() ? "-" : r.last_error)
              << "\n";
  std::cout << rows->size() << " " << status << " deliveries shown"
            << (static_cast<int64_t>(rows->size()) == limit ? " (--limit reached)"
                                                              : "")
            << "\n";
  return 0;
}

int retry(pg_connection& db, admin_repository& repo, const admin_args& a) {
  if (!a.ids.empty()) {
    if (!a.statuses.empty() || a.queue)
      return usage("retry takes ids or --status [--queue], not both");
    auto ids = parse_ids(a.ids);
    if (!ids)
      return usage("retry: ids must be positive integers");
    auto verdicts = repo.retry(db, *ids);
    if (!verdicts)
      return db_failed("retry", verdicts.error());
    int rc = 0;
    for (size_t i = 0; i < ids->size(); ++i) {
      auto v = (*verdicts)[i];
      if (v == admin_verdict::done)
        std::cout << "delivery " << (*ids)[i] << ": back to pending, sent again "
                     "with its attempts reset\n";
      else {
        rc = exit_failure;
        std::cerr << "delivery " << (*ids)[i] << ": "
                  << (v == admin_verdict::unknown
                        ? "not found"
                        : "not failed or expired: only those can be retried")
                  << "\n";
      }
    }
    return rc;
  }
  auto status = a.statuses.size() == 1 ? parse_delivery_status(a.statuses[0])
                                       : std::nullopt;
  if (!status || !is_retryable_by_operator(*status))
    return usage("retry needs delivery ids, or --status failed|expired "
                 "[--queue Q]");
  auto n = repo.retry_all(db, *status, a.queue);
  if (!n)
    return db_failed("retry", n.error());
  std::cout << "retried " << *n << " " << a.statuses[0] << " deliveries"
            << (a.queue ? " of queue " + *a.queue : "") << "\n";
  return 0;
}

int forget(pg_connection& db, admin_repository& repo, const admin_args& a) {
  auto ids = parse_ids(a.ids);
  if (!ids || ids->size() != 1)
    return usage("forget takes exactly one delivery id");
  auto v = repo.forget(db, ids->front());
  if (!v)
    return db_failed("forget", v.error());
  switch (*v) {
    case admin_verdict::done:
      std::cout << "delivery " << ids->front()
                << " deleted (and its event, if no other delivery had it)\n";
      return 0;
    case admin_verdict::done_unblocked:
      std::cout << "delivery " << ids->front()
                << " deleted (and its event, if no other delivery had it);"
                   " it blocked its key, which goes on with the next delivery\n";
      return 0;
    case admin_verdict::unknown:
      std::cerr << "delivery " << ids->front() << ": not found\n";
      return exit_failure;
    default:
      std::cerr << "delivery " << ids->front()
                << ": still pending or dispatched; only final deliveries can "
                   "be forgotten\n";
      return exit_failure;
  }
}

int quarantined(pg_connection& db, admin_repository& repo, const admin_args& a) {
  auto limit = a.limit == not_given ? 100 : a.limit;
  if (limit < 1 || limit > 100000)
    return usage("--limit must be 1..100000");
  auto events = repo.list_quarantined_events(db, static_cast<int32_t>(limit));
  if (!events)
    return db_failed("quarantined", events.error());
  auto deliveries = repo.list_quarantined_deliveries(db, static_cast<int32_t>(limit));
  if (!deliveries)
    return db_failed("quarantined", deliveries.error());
  if (events->empty() && deliveries->empty()) {
    std::cout << "nothing quarantined\n";
    return 0;
  }
  // The key may be what made the row fail: only its length is shown.
  for (auto& e : *events)
    std::cout << "event " << e.event_id << "  " << e.event_type
              << (e.key_bytes < 0 ? "" : "  key of " + std::to_string(e.key_bytes)
                                           + " bytes")
              << "\n"
              << "  created " << local_time(e.created_at) << "  quarantined "
              << local_time(e.quarantined_at) << "\n"
              << "  reason: " << e.reason << "\n";
  for (auto& r : *deliveries)
    std::cout << "delivery " << r.delivery_id << "  event " << r.event_id << "  "
              << r.event_type << "\n"
              << "  job " << r.job << "  queue " << r.queue << "  attempts "
              << r.attempts << "\n"
              << "  created " << local_time(r.created_at) << "  quarantined "
              << local_time(r.finished_at) << "\n"
              << "  reason: " << r.last_error << "\n";
  std::cout << events->size() << " quarantined events and " << deliveries->size()
            << " quarantined deliveries shown"
            << (static_cast<int64_t>(std::max(events->size(), deliveries->size()))
                    == limit
                  ? " (--limit reached)"
                  : "")
            << "\n";
  if (!events->empty())
    std::cout << "remove an event with: outboxctl discard EVENT_ID...\n";
  if (!deliveries->empty())
    std::cout << "a delivery is failed: outboxctl forget DELIVERY_ID removes it,"
                 " outboxctl retry DELIVERY_ID sends it again once fixed\n";
  return 0;
}

int discard(pg_connection& db, admin_repository& repo, const admin_args& a) {
  auto ids = parse_ids(a.ids);
  if (!ids || ids->empty())
    return usage("discard takes quarantined event ids (positive integers)");
  auto verdicts = repo.discard(db, *ids);
  if (!verdicts)
    return db_failed("discard", verdicts.error());
  int rc = 0;
  for (size_t i = 0; i < ids->size(); ++i) {
    if ((*verdicts)[i] == admin_verdict::done) {
      std::cout << "event " << (*ids)[i] << ": deleted\n";
    } else {
      rc = exit_failure;
      std::cerr << "event " << (*ids)[i]
                << ": not a quarantined event (only those can be discarded)\n";
    }
  }
  return rc;
}

// The --status values of prune, every final status when none is given;
// nullopt, with the value in `refused`, when one names no final status.
std::optional<std::vector<delivery_status>>
final_statuses(const std::vector<std::string>& args, std::string& refused) {
  std::vector<delivery_status> out;
  for (auto& arg : args) {
    auto s = parse_delivery_status(arg);
    if (!s || !is_final(*s)) {
      refused = arg;
      return std::nullopt;
    }
    out.push_back(*s);
  }
  if (args.empty())
    for (auto s : all_delivery_statuses())
      if (is_final(s))
        out.push_back(s);
  return out;
}

int prune(pg_connection& db, admin_repository& repo, const admin_args& a) {
  if (a.hours == not_given)
    return usage("prune needs --hours N (N >= 0)");
  if (a.hours < 0)
    return usage("--hours must be >= 0");
  if (a.hours > 24 * 365 * 100)
    return usage("--hours is too large");
  std::string refused;
  auto statuses = final_statuses(a.statuses, refused);
  if (!statuses)
    return usage("--status: \"" + refused
                 + "\" is not a final status (completed, failed, expired, "
                   "superseded)");
  auto r = repo.prune(db, a.hours, *statuses);
  if (!r)
    return db_failed("prune", r.error());
  std::cout << "pruned " << r->deliveries << " deliveries and " << r->events
            << " events older than " << a.hours << " hours\n";
  if (r->kept_blocking > 0)
    std::cout << "kept " << r->kept_blocking
              << " deliveries that block their key (outboxctl blocked)\n";
  return 0;
}

} // namespace

bool is_admin_verb(const std::string& verb) {
  return verb == "failed" || verb == "expired" || verb == "retry"
         || verb == "forget" || verb == "prune" || verb == "quarantined"
         || verb == "discard" || verb == "blocked" || verb == "skip";
}

int run_admin_verb(const std::string& verb, const admin_args& args,
                   const config& cfg) {
  if ((verb == "failed" || verb == "expired" || verb == "prune"
       || verb == "quarantined" || verb == "blocked")
      && !args.ids.empty())
    return usage(verb + " takes no ids");
  auto db = pg_connection::connect(cfg.database_url);
  if (!db)
    return db_failed(verb, db.error());
  admin_repository repo{cfg.names};
  if (verb == "failed" || verb == "expired") // the verb names the status
    return list(*db, repo, *parse_delivery_status(verb), args);
  if (verb == "retry")
    return retry(*db, repo, args);
  if (verb == "forget")
    return forget(*db, repo, args);
  if (verb == "quarantined")
    return quarantined(*db, repo, args);
  if (verb == "discard")
    return discard(*db, repo, args);
  if (verb == "blocked")
    return blocked_verb(*db, cfg.names, args);
  if (verb == "skip")
    return skip_verb(*db, cfg.names, args);
  return prune(*db, repo, args);
}

} // namespace outbox
