// The key tables: which JSON keys the top level, a route and retentionHours
// take, where each goes and its limits; the routes read through them.
#include "core/config/config_keys.hpp"

#include <cstdio>
#include <set>

#include "core/config/config_checks.hpp"

namespace outbox {
namespace config_detail {

namespace {

// The key as it would be written in JSON, so that a control character in
// it cannot garble the message.
std::string quoted(const std::string& key) {
  std::string out = "[\"";
  for (char c : key) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += {'\\', c};
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"]";
}

// `type` receives the route's queueType (a queue's, kept apart from the
// route's delivery rules).
key_table route_keys(route& r, queue_type& type) {
  auto& rules = r.rules;
  return {
    {"job", key_kind::job, &r.job, 0, 0, true},
    {"queue", key_kind::queue, &r.queue, 0, 0, true},
    {"retryDelaysSeconds", key_kind::delays, &rules.retry_delays_seconds},
    {"repeatLastDelay", key_kind::flag, &rules.repeat_last_delay},
    {"deliveryTimeoutSeconds", key_kind::integer,
     &rules.delivery_timeout_seconds, 1, INT32_MAX},
    {"ttlSeconds", key_kind::integer, &rules.ttl_seconds, 0, INT32_MAX},
    {"merge", key_kind::merge, &rules.merge},
    {"queueType", key_kind::queue_type, &type},
    {"ordering", key_kind::ordering, &rules.ordering},
    {"onFailure", key_kind::on_failure, &rules.on_failure},
  };
}

key_table retention_keys(retention_policy& r) {
  return {
    {"completed", key_kind::hours, &r.completed_hours},
    {"superseded", key_kind::hours, &r.superseded_hours},
    {"failed", key_kind::hours, &r.failed_hours},
    {"expired", key_kind::hours, &r.expired_hours},
  };
}

// `ttl` receives the top-level ttlSeconds, which `routes` read (and
// queueType, c.default_queue_type).
key_table top_level_keys(config& c, int64_t& ttl) {
  auto& n = c.names;
  return {
    {"databaseUrl", key_kind::secret, &c.database_url},
    {"amqpUrl", key_kind::secret, &c.amqp_url},
    {"databaseUrlFile", key_kind::secret, &c.database_url_file},
    {"amqpUrlFile", key_kind::secret, &c.amqp_url_file},
    {"eventsTableName", key_kind::identifier, &n.events},
    {"deliveriesTableName", key_kind::identifier, &n.deliveries},
    {"migrationsTableName", key_kind::identifier, &n.migrations},
    {"publishFunctionName", key_kind::identifier, &n.publish_function},
    {"batchSize", key_kind::integer, &c.batch_size, 1, 10000},
    {"maxInFlight", key_kind::integer, &c.max_in_flight, 1, 100000},
    {"deliverImmediately", key_kind::flag, &c.deliver_immediately},
    {"routerLingerMs", key_kind::integer, &c.router_linger_ms, 0, 1000},
    {"routerLingerMinEvents", key_kind::integer, &c.router_linger_min_events,
     1, 10000},
    {"enabled", key_kind::flag, &c.enabled},
    {"except", key_kind::patterns, &c.direct_patterns},
    {"ttlSeconds", key_kind::integer, &ttl, 0, INT32_MAX},
    {"queueType", key_kind::queue_type, &c.default_queue_type},
    {"retentionHours", key_kind::retention, &c.retention},
    {"routes", key_kind::routes,
     routes_target{&c.routes, &ttl, &c.default_queue_type, &c.queue_types}, 0, 0,
     true},
  };
}

void read_route(const json& obj, const std::string& event_type,
                const std::string& path, const routes_target& t, problems& errs) {
  if (!obj.IsObject()) {
    errs.add(path, obj, "must be an object");
    return;
  }
  route r;
  r.event_type = event_type;
  r.rules.ttl_seconds = *t.default_ttl; // the route's own ttlSeconds wins
  auto type = *t.default_type;          // and its own queueType
  read_keys(obj, path, route_keys(r, type), errs);
  if (r.rules.on_failure == failure_policy::block_key
      && r.rules.ordering != key_ordering::key)
    errs.add(path + ".onFailure",
             "\"block\" needs \"ordering\": \"key\" (without ordering no "
             "delivery waits for another)");
  auto& out = *t.routes;
  for (auto& other : out)
    if (other.event_type == event_type && other.job == r.job
        && other.queue == r.queue && !r.job.empty())
      errs.add(path, "repeats job \"" + r.job + "\" on queue \"" + r.queue
                       + "\" of an earlier route of this event type");
  record_queue_type(r, type, path, errs, *t.types);
  out.push_back(std::move(r));
}

} // namespace

// `retentionHours`: false keeps every delivery (outboxctl prune is left);
// an object sets the window of each final status it names, the others
// keep their defaults.
void read_retention(const json& v, const std::string& path, problems& errs,
                    retention_policy& out) {
  if (v.IsBool() && !v.GetBool()) {
    out.enabled = false;
    return;
  }
  if (!v.IsObject()) {
    errs.add(path, v,
             "must be an object of hours per final status (completed, "
             "superseded, failed, expired), or false to keep every delivery");
    return;
  }
  out.enabled = true;
  read_keys(v, path, retention_keys(out), errs);
}

void read_routes(const json& v, const std::string& path,
                 const routes_target& t, problems& errs) {
  if (!v.IsObject()) {
    errs.add(path, v, "must be an object of event type -> list of routes");
    return;
  }
  std::set<std::string> seen;
  for (auto& m : v.GetObject()) {
    std::string type{m.name.GetString(), m.name.GetStringLength()};
    auto at = path + quoted(type);
    if (type.empty())
      errs.add(at, "an event type must not be empty");
    else if (auto rule = check_amqp_name(type, 255); !rule.empty())
      errs.add(at, "an event type " + rule);
    if (!seen.insert(type).second) {
      errs.add(at, "given more than once (list all its routes in one entry)");
      continue;
    }
    if (!m.value.IsArray() || m.value.Empty()) {
      errs.add(at, m.value, "must be a non-empty list of routes");
      continue;
    }
    for (rapidjson::SizeType i = 0; i < m.value.Size(); ++i)
      read_route(m.value[i], type, at + "[" + std::to_string(i) + "]", t, errs);
  }
  check_orderings(*t.routes, path, errs);
}

void read_top_level(const json& doc, problems& errs, config& cfg) {
  int64_t default_ttl = 0;
  read_keys(doc, "", top_level_keys(cfg, default_ttl), errs);
}

} // namespace config_detail
} // namespace outbox
