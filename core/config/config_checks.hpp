// The checks of what the readers took: the connection URLs' syntax, and the
// rules across keys (distinct table names, one type and one ordering per
// queue).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/config/config_readers.hpp"

namespace outbox {
namespace config_detail {

// A queue has one type: a route that gives its queue another type than an
// earlier route of that queue (its own queueType, or the default) is wrong.
void record_queue_type(const route& r, queue_type type, const std::string& path,
                       problems& errs, std::map<std::string, queue_type>& types);

// The deliveries of one job on one queue wait for each other by key or do
// not: routes of one job and queue must agree on `ordering`.
void check_orderings(const std::vector<route>& routes, const std::string& path,
                     problems& errs);

// Checks a URL's syntax without echoing it: it may hold a password.
void check_database_url(const std::string& url, const char* source,
                        problems& errs);
void check_amqp_url(const std::string& url, const char* source,
                    problems& errs);

// The events, deliveries and migrations tables must be three tables.
void check_distinct_names(const schema_names& n, problems& errs);

} // namespace config_detail
} // namespace outbox
