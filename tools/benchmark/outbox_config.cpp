#include "tools/benchmark/outbox_config.hpp"

#include <map>

#include "core/base/errors.hpp"
#include "core/json/omittable.hpp"
#include "core/json/json_writer.hpp"

namespace outbox::bench {

namespace {

struct route_json {
  std::string job, queue;
  std::vector<int32_t> retry_delays_seconds{1};
  int32_t delivery_timeout_seconds = 60;
  std::string ordering = "none", merge = "replace";
};

template <class Inspector>
bool inspect(Inspector& f, route_json& x) {
  return f(field("job", x.job), field("queue", x.queue),
           field("retryDelaysSeconds", x.retry_delays_seconds),
           field("deliveryTimeoutSeconds", x.delivery_timeout_seconds),
           field("ordering", x.ordering), field("merge", x.merge));
}

// retentionHours: one window, in hours, for each final status.
struct retention_json {
  double completed = 0, superseded = 0, failed = 0, expired = 0;
};

template <class Inspector>
bool inspect(Inspector& f, retention_json& x) {
  return f(field("completed", x.completed), field("superseded", x.superseded),
           field("failed", x.failed), field("expired", x.expired));
}

struct config_json {
  outbox_knobs k;
  std::map<std::string, std::vector<route_json>> routes;
  omittable<retention_json> retention; ///< left out when off
};

template <class Inspector>
bool inspect(Inspector& f, config_json& x) {
  auto& k = x.k;
  return f(field("databaseUrl", k.database_url), field("amqpUrl", k.amqp_url),
           field("eventsTableName", k.names.events),
           field("deliveriesTableName", k.names.deliveries),
           field("migrationsTableName", k.names.migrations),
           field("publishFunctionName", k.names.publish_function),
           field("batchSize", k.batch_size),
           field("routerLingerMs", k.router_linger_ms),
           field("routerLingerMinEvents", k.router_linger_min_events),
           field("deliverImmediately", k.deliver_immediately),
           field("routes", x.routes), field("retentionHours", x.retention));
}

} // namespace

std::string bench_job(int64_t r) {
  return "BenchJob" + std::to_string(r);
}

caf::expected<std::string> outbox_config_json(const outbox_knobs& k) {
  config_json doc{k, {}, {}};
  if (k.retention_minutes > 0) {
    auto hours = k.retention_minutes / 60;
    doc.retention = retention_json{hours, hours, hours, hours};
  }
  auto& routes = doc.routes["bench.event"];
  for (int64_t r = 0; r < k.routes; ++r) {
    route_json rj{bench_job(r), k.queues[static_cast<size_t>(r) % k.queues.size()]};
    if (k.ordered_keys > 0) {
      rj.ordering = "key";
      rj.merge = "none";
    }
    routes.push_back(std::move(rj));
  }
  json_writer w{"config"};
  if (!w.write_document(doc))
    return make_error(errc::serialize_failed, w.error());
  return w.json();
}

} // namespace outbox::bench
