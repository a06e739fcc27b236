// A whole outbox node in the test process (every role, real actors on real
// servers) over the fixture's own tables and queues, and helpers to wait
// for deliveries to reach their final states.
#pragma once

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/message_types.hpp"
#include "actors/status_actor.hpp"
#include "actors/node.hpp"
#include "core/amqp/amqp_client.hpp"
#include "core/amqp/wire.hpp"
#include "core/base/errors.hpp"
#include "tests/integration/test_services.hpp"
#include "tests/integration/wait_until.hpp"

namespace outbox::testing {

struct node_test_config : caf::actor_system_config {
  node_test_config() {
    register_message_types(*this);
    load<caf::io::middleman>();
  }
};

struct cluster_fixture : schema_fixture {
  std::string queue_prefix = unique_prefix();
  std::vector<std::string> queues;
  /// The databases of a test's config of several: a queue they share has
  /// a queue of parked results per database (parked_results_queue).
  std::vector<std::string> databases;

  ~cluster_fixture() {
    if (auto c = amqp_client::connect(amqp_url(), "test cleanup"))
      for (auto& q : queues) {
        (*c)->delete_queue(q);
        (*c)->delete_queue(results_queue(q));
        for (auto& db : databases)
          (*c)->delete_queue(parked_results_queue(q, db));
      }
  }

  /// A queue name of this test only (deleted afterwards).
  std::string queue(const std::string& name) {
    queues.push_back(queue_prefix + name);
    return queues.back();
  }

  config make_config(std::vector<route> routes) {
    config c;
    c.database_url = database_url();
    c.amqp_url = amqp_url();
    c.names = names;
    c.routes = std::move(routes);
    return c;
  }

  /// Writes a config file for outboxd/outboxctl naming this fixture's
  /// servers and tables, with `routes_json` as its routes; returns `path`.
  /// `extra`: more top-level keys, each followed by a comma
  /// (`"maxInFlight": 200, `).
  std::string write_config_file(const std::string& path,
                                const std::string& routes_json,
                                int32_t batch_size = 100,
                                const std::string& extra = "") {
    std::ofstream out{path};
    out << "{\"databaseUrl\": \"" << database_url() << "\",\n"
        << " \"amqpUrl\": \"" << amqp_url() << "\",\n"
        << " \"eventsTableName\": \"" << names.events << "\",\n"
        << " \"deliveriesTableName\": \"" << names.deliveries << "\",\n"
        << " \"migrationsTableName\": \"" << names.migrations << "\",\n"
        << " \"publishFunctionName\": \"" << names.publish_function << "\",\n"
        << " \"batchSize\": " << batch_size << ",\n"
        << " " << extra << "\"routes\": " << routes_json << "}\n";
    return path;
  }

  /// The config keys of `n`'s tables, for an entry of `databases`:
  /// `"eventsTableName": "...", ..., "publishFunctionName": "..."`.
  static std::string tables_json(const schema_names& n) {
    return "\"eventsTableName\": \"" + n.events + "\", \"deliveriesTableName\": \""
           + n.deliveries + "\", \"migrationsTableName\": \"" + n.migrations
           + "\", \"publishFunctionName\": \"" + n.publish_function + "\"";
  }

  /// Deliveries not final yet.
  int64_t open_deliveries() {
    return count_status("pending") + count_status("dispatched");
  }

  /// (id, status) of the deliveries of one job, by id.
  std::vector<std::pair<int64_t, std::string>> deliveries_of(const std::string& job) {
    auto rows = must_exec(db, "SELECT id, status FROM " + all_deliveries(names)
                                + " d WHERE job = $1 ORDER BY id", {job});
    std::vector<std::pair<int64_t, std::string>> out;
    for (int i = 0; i < rows.size(); ++i)
      out.emplace_back(rows.int64(i, 0), rows.text(i, 1));
    return out;
  }
};

inline route make_route(std::string event_type, std::string job, std::string queue,
                        std::vector<int32_t> delays, int32_t timeout = 300) {
  route r;
  r.event_type = std::move(event_type);
  r.job = std::move(job);
  r.queue = std::move(queue);
  r.rules.retry_delays_seconds = std::move(delays);
  r.rules.delivery_timeout_seconds = timeout;
  return r;
}

/// Runs every role in this process until destroyed.
struct running_node {
  node_test_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<node> n;

  explicit running_node(const config& c) : running_node(one_database(c)) {
  }

  /// A node of every database of `all` (or those of `served`, as
  /// --databases names them), every queue of each.
  explicit running_node(const cluster_config& all,
                        std::vector<std::string> served = {}) {
    sys = std::make_unique<caf::actor_system>(cfg);
    node_settings settings;
    settings.roles = all_node_roles();
    settings.databases = served;
    std::set<std::string> queues;
    for (auto& db : all.databases)
      if (served.empty()
          || std::find(served.begin(), served.end(), db.database) != served.end())
        for (auto& q : db.queues())
          queues.insert(q);
    settings.queues.assign(queues.begin(), queues.end());
    settings.listen = host_port{"127.0.0.1", 0}; // any free port
    auto started = node::start(*sys, all, settings);
    if (!started)
      CAF_FAIL("node did not start: " << render(started.error()));
    n = std::move(*started);
  }

  static cluster_config one_database(const config& c) {
    cluster_config out;
    out.databases.push_back(c);
    return out;
  }

  /// Asks the node's status actor, as outboxctl does (over the network).
  cluster_status status() {
    auto hdl = sys->middleman().remote_actor<status_actor>("127.0.0.1",
                                                          n->status_port());
    if (!hdl)
      CAF_FAIL("status actor unreachable: " << sys->render(hdl.error()));
    cluster_status out;
    caf::scoped_actor self{*sys};
    self->request(*hdl, std::chrono::seconds{5}, status_atom::value)
      .receive([&](cluster_status& s) { out = std::move(s); },
               [&](caf::error& err) {
                 CAF_FAIL("no status: " << sys->render(err));
               });
    return out;
  }

  /// The metrics of one actor of this node, by name (zeros when unknown,
  /// also before the node's first report has reached its status actor).
  actor_metrics metrics_of(const std::string& actor) {
    auto s = status();
    for (auto& node : s.nodes)
      for (auto& a : node.actors)
        if (a.metrics.name == actor)
          return a.metrics;
    return {};
  }

  /// The counters of one actor of this node, by name.
  std::map<std::string, int64_t> counters_of(const std::string& actor) {
    return metrics_of(actor).counters;
  }

  ~running_node() {
    n->stop();
    n.reset();
    sys.reset(); // waits for the current passes
  }
};

} // namespace outbox::testing
