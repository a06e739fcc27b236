// The outbox config a benchmark run gives its relay: its own tables, the
// knobs of the run, and `routes` routes of "bench.event" spread over its
// queues.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/schema_names.hpp"

namespace outbox::bench {

struct outbox_knobs {
  std::string database_url, amqp_url;
  schema_names names;
  int64_t batch_size = 100, router_linger_ms = 5, router_linger_min_events = 6;
  bool deliver_immediately = true;
  int64_t routes = 1;
  std::vector<std::string> queues;
  /// > 0: the routes are ordered by key (and coalesce nothing, so that
  /// every event is delivered, as in an unordered run).
  int64_t ordered_keys = 0;
  /// > 0: the config carries built-in retention, `retentionHours` with this
  /// window (in minutes) for every final status. Only the soak's relay
  /// gets it: the other phases count and time the completed rows after the
  /// fact, and retention would delete them.
  double retention_minutes = 0;
};

/// The job of route number `r` ("BenchJob<r>").
std::string bench_job(int64_t r);

/// The config as JSON, written by the core's serializer (so URLs and names
/// are escaped); an error names a value JSON cannot carry.
caf::expected<std::string> outbox_config_json(const outbox_knobs& k);

} // namespace outbox::bench
