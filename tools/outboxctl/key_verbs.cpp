#include "tools/outboxctl/key_verbs.hpp"

#include <iostream>

#include "core/pg/key_admin_repository.hpp"
#include "tools/outboxctl/admin_output.hpp"

namespace outbox {

namespace {

// A key is the producer's text: quoted and escaped (tools/outboxctl/admin_output.hpp).
// The last error is the stored reason `outboxctl failed` shows as well.
void print_blocked(const blocked_key& b) {
  std::cout << "key " << quoted_text(b.key) << "  job " << b.job << "  queue "
            << b.queue << "\n"
            << "  blocked by delivery " << b.delivery_id << " (event "
            << b.event_id << "), " << to_string(b.status) << " after "
            << b.attempts << " attempts, since " << local_time(b.since) << "\n"
            << "  waiting behind it: " << b.parked << " deliveries\n"
            << "  last error: " << (b.last_error.empty() ? "-" : b.last_error)
            << "\n";
}

const char* why_not(skip_verdict v) {
  switch (v) {
    case skip_verdict::unknown:
      return "not found";
    case skip_verdict::not_ordered:
      return "its route does not order by key: nothing to skip (retry or "
             "forget it instead)";
    default:
      return "does not hold its key (it waits for its turn, is done, or was "
             "skipped already): nothing to skip";
  }
}

} // namespace

int blocked_verb(pg_connection& db, const schema_names& names,
                 const admin_args& a) {
  auto limit = a.limit == not_given ? 100 : a.limit;
  if (limit < 1 || limit > 100000)
    return admin_usage("--limit must be 1..100000");
  key_admin_repository repo{names};
  auto keys = repo.blocked(db, a.queue, static_cast<int32_t>(limit));
  if (!keys)
    return admin_db_failed("blocked", keys.error());
  if (keys->empty()) {
    std::cout << "no blocked keys" << (a.queue ? " in queue " + *a.queue : "")
              << "\n";
    return 0;
  }
  for (auto& b : *keys)
    print_blocked(b);
  std::cout << keys->size() << " blocked keys shown"
            << (static_cast<int64_t>(keys->size()) == limit ? " (--limit reached)"
                                                              : "")
            << "\n"
            << "let a key go on with: outboxctl skip DELIVERY_ID (the head "
               "stays failed), or outboxctl retry DELIVERY_ID once fixed\n";
  return 0;
}

int skip_verb(pg_connection& db, const schema_names& names, const admin_args& a) {
  auto ids = parse_ids(a.ids);
  if (!ids || ids->empty())
    return admin_usage("skip takes delivery ids (positive integers)");
  key_admin_repository repo{names};
  auto outcomes = repo.skip(db, *ids);
  if (!outcomes)
    return admin_db_failed("skip", outcomes.error());
  int rc = 0;
  for (size_t i = 0; i < ids->size(); ++i) {
    auto& o = (*outcomes)[i];
    if (o.verdict == skip_verdict::skipped) {
      std::cout << "delivery " << (*ids)[i] << ": skipped (was "
                << to_string(o.before)
                << ", now failed); its key goes on with the next delivery\n";
    } else {
      rc = admin_exit_failure;
      std::cerr << "delivery " << (*ids)[i] << ": " << why_not(o.verdict) << "\n";
    }
  }
  return rc;
}

} // namespace outbox
