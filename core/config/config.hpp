// The outbox configuration: connection URLs, schema names, batch size and
// routes, read from a JSON file and validated as a whole.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/amqp/queue_type.hpp"
#include "core/domain/retention.hpp"
#include "core/domain/route.hpp"
#include "core/domain/schema_names.hpp"

namespace outbox {

struct config {
  /// The database's name in the cluster (`databases`, [a-z0-9_]{1,32});
  /// "default" for a config without `databases`.
  std::string database = "default";
  /// libpq URI or key=value string; OUTBOX_DATABASE_URL overrides it.
  std::string database_url = "postgresql://postgres@127.0.0.1:5432/postgres";
  /// amqp://user:password@host:port/vhost, or a list of such URLs, the
  /// nodes of one cluster, separated by commas (core/amqp/amqp_url_list.hpp);
  /// OUTBOX_AMQP_URL overrides it.
  std::string amqp_url = "amqp://guest:guest@127.0.0.1:5672/";
  /// Files that hold the URLs instead (databaseUrlFile, amqpUrlFile); ""
  /// when the URL is inline or the default.
  std::string database_url_file;
  std::string amqp_url_file;
  schema_names names;
  int32_t batch_size = 100;
  /// Deliveries of one queue out at once (status `dispatched`), counted in
  /// the database so that it holds for every dispatcher of the queue:
  /// beyond it, work waits in the table, where no delivery timeout runs,
  /// instead of in the broker's queue, where it does.
  int32_t max_in_flight = 1000;
  /// true: an insert's NOTIFY wakes the router, which wakes the dispatchers,
  /// so an event goes from commit to the broker without waiting for a poll;
  /// false: only the periodic passes (--sleep) move events on.
  bool deliver_immediately = true;
  /// Under load the router waits this long between passes, NOTIFYs
  /// notwithstanding, once a pass found at least router_linger_min_events
  /// events: bigger batches cost the database, the broker and the relay
  /// much less per event. 0: a pass for every wake-up.
  int32_t router_linger_ms = 5;
  int32_t router_linger_min_events = 6;
  /// false (or OUTBOX_ENABLED=false): the producer API publishes every
  /// event straight to RabbitMQ, as if there were no outbox.
  bool enabled = true;
  /// `except`: glob patterns of event types published straight to RabbitMQ
  /// (for messages worthless a moment later: metrics, presence).
  std::vector<std::string> direct_patterns;
  std::vector<route> routes;
  /// queueType: the type of the job queues (and their results queues) whose
  /// routes give none of their own.
  queue_type default_queue_type = queue_type::classic;
  /// The type of every routed queue: its routes' queueType, else the
  /// default; every route of a queue comes to the same.
  std::map<std::string, queue_type> queue_types;
  /// retentionHours: how long final deliveries are kept before the node
  /// that leads retention deletes them (actors/retention.hpp).
  retention_policy retention;

  /// The type `queue` is declared with (the default for a queue no route
  /// names).
  queue_type queue_type_of(const std::string& queue) const;

  /// True when the producer API publishes `event_type` directly: the outbox
  /// is disabled, or the type matches an `except` pattern.
  bool publishes_directly(const std::string& event_type) const;

  /// Returns the routes of one event type (empty if it has none).
  std::vector<route> routes_for(const std::string& event_type) const;

  /// Returns every distinct queue named by a route, sorted.
  std::vector<std::string> queues() const;
};

/// Every database a config file serves (docs/configuration.md "Many
/// databases"): one `config` each, sorted by name. A file without
/// `databases` serves one, named "default".
struct cluster_config {
  std::vector<config> databases; ///< at least one
  /// True when the file has a `databases` object (even of one entry).
  bool named = false;

  /// The database called `name`, or null.
  const config* find(const std::string& name) const;
};

/// Looks up an environment variable; tests pass their own.
using env_lookup = std::string (*)(const char* name);

/// Reads the real process environment ("" when unset).
std::string process_env(const char* name);

/// Parses and validates a JSON config text of any number of databases:
/// the top level's keys are the defaults of every entry of `databases`,
/// and an entry's key replaces the default whole (its `routes` are all its
/// routes). Problems of a default are reported once, at their top-level
/// path; an entry's at `databases.NAME.key`. OUTBOX_DATABASE_URL applies
/// only to a file without `databases`.
caf::expected<cluster_config> parse_cluster_config(const std::string& json,
                                                   env_lookup env = process_env);

/// Reads the file at `path`, then behaves as parse_cluster_config.
caf::expected<cluster_config> load_cluster_config(const std::string& path,
                                                  env_lookup env = process_env);

/// Parses and validates a JSON config text of one database (a file
/// without `databases`, or with one entry). On failure the error is
/// errc::config_unreadable (not JSON) or errc::config_invalid with every
/// problem on its own line, each naming its path and rule. Never includes
/// credentials in the text.
caf::expected<config> parse_config(const std::string& json,
                                   env_lookup env = process_env);

/// Reads the file at `path`, then behaves as parse_config.
caf::expected<config> load_config(const std::string& path,
                                  env_lookup env = process_env);

} // namespace outbox
