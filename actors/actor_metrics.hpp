// What an actor reports after each pass: its node's agent forwards it to
// the status actor, and the node's /metrics renders it.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <caf/meta/type_name.hpp>

#include "actors/latency_histogram.hpp"

namespace outbox {

/// What an actor reports after each pass. `last_error` is the rendering of
/// one of our own errors (category, code, context), never a server's text.
struct actor_metrics {
  std::string name;  ///< unique in its node, e.g. "dispatcher stock.publish"
  std::string role;  ///< router, dispatcher, results, sweeper
  std::string queue; ///< "" for the router and the sweeper
  /// The database it serves when the config names several ("" for the
  /// only one, and for a result handler, which serves every database of
  /// its queue).
  std::string database;
  int64_t passes = 0;
  int64_t rows = 0;   ///< events routed, deliveries sent, results applied...
  int64_t errors = 0; ///< failed passes
  int64_t last_pass_ms = 0; ///< Unix time in ms of the last pass, 0 = none
  bool connected = true;    ///< its last pass reached the database/broker
  std::string last_error;
  std::map<std::string, int64_t> counters; ///< role-specific, e.g. "stale"
  /// Role-specific values as they are now, e.g. a dispatcher's
  /// "in_flight_window" (its queue's limit) and "completion_rate".
  std::map<std::string, int64_t> gauges;
  /// Latencies by name ("pass", "confirm", ...): for the node's own
  /// /metrics only; the agent leaves them out of what it sends the status
  /// node.
  std::map<std::string, latency_histogram> histograms;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_metrics& x) {
  return f(caf::meta::type_name("actor_metrics"), x.name, x.role, x.queue,
           x.database, x.passes, x.rows, x.errors, x.last_pass_ms, x.connected,
           x.last_error, x.counters, x.gauges, x.histograms);
}

} // namespace outbox
