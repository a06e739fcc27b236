// The checks: URL syntax (without echoing a URL) and the rules across keys
// of a validated config.
#include "core/config/config_checks.hpp"

#include <set>
#include <utility>

#include <libpq-fe.h>

#include "core/amqp/amqp_url_list.hpp"
#include "core/base/errors.hpp"

namespace outbox {
namespace config_detail {

// A queue has one type: a route that gives its queue another type than an
// earlier route of that queue (its own queueType, or the default) is wrong.
void record_queue_type(const route& r, queue_type type, const std::string& path,
                       problems& errs, std::map<std::string, queue_type>& types) {
  if (r.queue.empty())
    return;
  auto [it, fresh] = types.emplace(r.queue, type);
  if (!fresh && it->second != type)
    errs.add(path, std::string{"gives queue \""} + r.queue + "\" the type \""
                     + to_string(type) + "\", an earlier route of it \""
                     + to_string(it->second)
                     + "\" (a queue has one type: give every route of it the "
                       "same queueType)");
}

// The deliveries of one job on one queue wait for each other by key or do
// not: an unordered route's deliveries would neither wait nor hold, and
// its coalescing would supersede ordered ones.
void check_orderings(const std::vector<route>& routes, const std::string& path,
                     problems& errs) {
  std::map<std::pair<std::string, std::string>, key_ordering> seen;
  for (auto& r : routes) {
    auto [it, fresh] = seen.emplace(std::make_pair(r.job, r.queue),
                                    r.rules.ordering);
    if (!fresh && it->second != r.rules.ordering) {
      errs.add(path, "job \"" + r.job + "\" on queue \"" + r.queue
                       + "\" is ordered by key on one route and not on another "
                         "(give every route of a job and queue the same "
                         "\"ordering\")");
      it->second = r.rules.ordering; // once per pair is enough
    }
  }
}

// Checks the URL's syntax without echoing it: it may hold a password.
void check_database_url(const std::string& url, const char* source,
                        problems& errs) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (opts == nullptr)
    errs.add(source, "is not a valid libpq connection URI or key=value string");
  PQconninfoFree(opts);
  PQfreemem(err);
}

void check_amqp_url(const std::string& url, const char* source,
                    problems& errs) {
  if (auto urls = split_amqp_urls(url); !urls)
    errs.add(source, context_of(urls.error()));
}

void check_distinct_names(const schema_names& n, problems& errs) {
  std::set<std::string> tables{n.events, n.deliveries, n.migrations};
  if (tables.size() != 3)
    errs.add("eventsTableName/deliveriesTableName/migrationsTableName",
             "must be three different names");
}

} // namespace config_detail
} // namespace outbox
