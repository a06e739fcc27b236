#include "actors/node_roles.hpp"

#include <algorithm>

#include <caf/io/middleman.hpp>

#include "actors/dispatcher.hpp"
#include "actors/node_agent.hpp"
#include "actors/node_tls.hpp"
#include "actors/event_watcher.hpp"
#include "actors/ready_listener.hpp"
#include "actors/result_handler.hpp"
#include "actors/retention.hpp"
#include "actors/router.hpp"
#include "actors/status.hpp"
#include "actors/sweeper.hpp"
#include "cluster_port/guard.hpp"
#include "core/amqp/amqp_endpoints.hpp"
#include "core/base/errors.hpp"
#include "core/domain/ready_notice.hpp"
#include "core/pg/db_retention_store.hpp"
#include "core/pg/db_stores.hpp"
#include "core/pg/pg_listener.hpp"

namespace outbox {

namespace {

constexpr auto confirm_timeout = std::chrono::seconds{10};
constexpr auto result_wait = std::chrono::milliseconds{250};

std::shared_ptr<db_delivery_store> delivery_store(const config& cfg,
                                                  commit_mode mode) {
  return std::make_shared<db_delivery_store>(cfg.database_url, cfg.names, mode);
}

// An actor's name in the status view, unique in its node: with databases
// named in the config, the database follows ("dispatcher mail@orders"), as
// in its metrics (pass_settings::database).
std::string actor_name(const node_bootstrap& b, std::string base,
                       const config& cfg) {
  return b.all.named ? base + "@" + cfg.database : base;
}

// The pass loop of an actor of one database; `led_as`: the role whose
// leader for the database runs its passes (leadership_view), "" for none.
pass_settings pass_of(const node_bootstrap& b, const config& cfg,
                      const std::string& led_as = "") {
  auto out = b.pass;
  if (b.all.named)
    out.database = cfg.database;
  if (b.leadership && !led_as.empty())
    out.leader = pass_leader{b.leadership, led_as, b.info.name};
  return out;
}

/// The cluster's status actor, published at --listen (not with --once).
caf::error spawn_status(node_bootstrap& b) {
  if (b.settings.once)
    return caf::none;
  std::vector<named_status_store> stores;
  // The status node shows every database of the cluster, served here or
  // not.
  for (auto& cfg : b.all.databases)
    stores.push_back({cfg.database, std::make_shared<db_status_store>(
                                      cfg.database_url, cfg.names)});
  // Its counts readers block on their databases; it never does.
  b.actors.status = b.sys.spawn(status, std::move(stores), b.all.named, true);
  auto& listen = b.settings.listen;
  if (!listen)
    return caf::none;
  auto port = publish_status_actor(b.sys, b.actors.status, *listen);
  if (!port)
    return make_error(errc::config_invalid,
                      "cannot listen on " + listen->host + ":"
                        + std::to_string(listen->port)
                        + " (in use or not a local address)");
  b.actors.status_port = *port;
  // CAF bounds nothing before a peer's handshake: the guard does
  // (cluster_port/guard.hpp, docs/operations.md "TLS between nodes").
  cluster_port::watch(*port, b.sys.has_openssl_manager());
  return caf::none;
}

/// Every node but a --once run has an agent: it joins this node's status
/// actor, the one at --join, or none.
void spawn_agent(node_bootstrap& b) {
  if (b.settings.once)
    return;
  status_address target;
  target.local = b.actors.status;
  if (!target.local && b.settings.join) {
    target.host = b.settings.join->host;
    target.port = b.settings.join->port;
  }
  // A sweeper needs the status node's view of live result handlers.
  if (b.settings.has(node_role::sweeper))
    b.results = std::make_shared<results_view>();
  // Several databases: the status node spreads their leaders.
  if (b.all.named)
    b.leadership = std::make_shared<leadership_view>();
  b.actors.agent = b.sys.spawn(node_agent, target, b.results, b.settings.drain,
                               b.leadership);
}

// Claim on route (core/domain/handoff.hpp): a node that routes hands new
// deliveries to its own dispatchers, unless deliveries wait for the
// dispatchers' timers (deliverImmediately: false) or passes run only on
// request (--once).
bool hands_over(const node_bootstrap& b, const config& cfg) {
  return b.settings.has(node_role::router) && cfg.deliver_immediately
         && !b.settings.once;
}

bool routes_to(const config& cfg, const std::string& queue) {
  auto qs = cfg.queues();
  return std::find(qs.begin(), qs.end(), queue) != qs.end();
}

void spawn_dispatcher(node_bootstrap& b, const config& cfg, database_actors& d,
                      const std::string& queue) {
  std::shared_ptr<handoff_box> box;
  if (hands_over(b, cfg)) {
    box = std::make_shared<handoff_box>(queue);
    d.handoffs.push_back(box);
  }
  auto publisher = std::make_shared<amqp_job_publisher>(
    cfg.amqp_url, queue, std::chrono::milliseconds{confirm_timeout},
    cfg.queue_type_of(queue), b.all.named ? cfg.database : "");
  auto a = b.sys.spawn<caf::detached>(dispatcher,
                                      delivery_store(cfg, commit_mode::relay_progress),
                                      publisher, queue,
                                      dispatch_limits{cfg.batch_size,
                                                      cfg.max_in_flight},
                                      pass_of(b, cfg), b.actors.agent, box);
  b.actors.dispatchers.push_back(a);
  d.local_dispatchers.push_back({queue, a});
  b.info.actors.push_back(
    {actor_name(b, "dispatcher " + queue, cfg), "dispatcher", queue, a});
}

bool serves(const std::vector<const config*>& dbs, const config& db) {
  return std::find(dbs.begin(), dbs.end(), &db) != dbs.end();
}

// One handler per queue, whichever databases route to it: a worker sends
// every result of the queue to one results queue (core/domain/dispatch_tag.hpp).
// It takes the results of every database of the config that routes to the
// queue: those this node serves it applies, the others' it parks in their
// own queues, for a node that serves them (--databases). A queue of several
// databases also gets, per database served here, a handler of the results
// parked for it.
void spawn_result_handler(node_bootstrap& b, const std::string& queue,
                          const std::vector<const config*>& dbs) {
  std::vector<const config*> routing;
  for (auto& cfg : b.all.databases)
    if (routes_to(cfg, queue))
      routing.push_back(&cfg);
  if (routing.empty())
    return;
  // The broker and the queue's type are the cluster's (config checks).
  auto& cfg = *routing.front();
  // The prefetch bounds what one handler holds unacked: one batch.
  auto prefetch = static_cast<uint16_t>(std::min(cfg.batch_size, 65535));
  auto type = cfg.queue_type_of(queue);
  // Its results are acked once applied: they must be durable by then.
  auto target = [&](const config& db) {
    return result_target{db.names.dispatch_tag,
                         serves(dbs, db) ? delivery_store(db, commit_mode::before_ack)
                                         : nullptr,
                         b.all.named ? db.database : ""};
  };
  std::vector<result_target> targets;
  std::vector<std::string> names;
  for (auto* db : routing) {
    targets.push_back(target(*db));
    names.push_back(db->database);
  }
  std::shared_ptr<result_parker> parker;
  if (routing.size() > 1)
    parker = std::make_shared<amqp_result_parker>(cfg.amqp_url, queue, names,
                                                  confirm_timeout, type);
  auto source = std::make_shared<amqp_result_source>(cfg.amqp_url, queue,
                                                     prefetch, type);
  auto r = b.sys.spawn<caf::detached>(result_handler, std::move(targets), source,
                                      queue, cfg.batch_size, result_wait,
                                      b.pass, b.actors.agent, parker);
  b.actors.result_handlers.push_back(r);
  b.info.actors.push_back({"results " + queue, "results", queue, r});
  if (!parker)
    return;
  for (auto* db : routing) {
    if (!serves(dbs, *db))
      continue;
    auto parked = std::make_shared<amqp_result_source>(cfg.amqp_url, queue,
                                                       prefetch, type, db->database);
    auto p = b.sys.spawn<caf::detached>(result_handler,
                                        std::vector<result_target>{target(*db)},
                                        parked, queue, db->batch_size, result_wait,
                                        pass_of(b, *db), b.actors.agent,
                                        std::shared_ptr<result_parker>{});
    b.actors.result_handlers.push_back(p);
    b.info.actors.push_back(
      {actor_name(b, "results " + queue, *db), "results", queue, p});
  }
}

/// Wakes this node's dispatchers on other nodes' NOTIFYs of new deliveries.
void spawn_ready_listener(node_bootstrap& b, const config& cfg,
                          database_actors& d) {
  auto& local = d.local_dispatchers;
  if (b.settings.once || !cfg.deliver_immediately || local.empty())
    return;
  d.ready_listener = b.sys.spawn<caf::detached>(
    ready_listener,
    ready_listener_args{pg_listener::factory(cfg.database_url,
                                             cfg.names.ready_channel()),
                        cfg.names.ready_channel(), b.origin, local,
                        b.actors.agent, b.all.named ? cfg.database : ""});
}

/// The router, and its event watcher when it delivers immediately.
void spawn_router(node_bootstrap& b, const config& cfg, database_actors& d) {
  std::optional<ready_notify> notify;
  if (cfg.deliver_immediately)
    notify = ready_notify{cfg.names.ready_channel(), b.origin};
  auto routes = std::make_shared<db_routing_store>(cfg.database_url, cfg.names,
                                                   cfg.routes, std::move(notify));
  auto settings = pass_of(b, cfg, "router");
  settings.linger = std::chrono::milliseconds{cfg.router_linger_ms};
  settings.linger_min_rows = cfg.router_linger_min_events;
  auto& router_hdl = d.router;
  router_hdl = b.sys.spawn<caf::detached>(router, routes, cfg.batch_size,
                                          d.local_dispatchers, d.handoffs,
                                          settings, b.actors.agent,
                                          cfg.deliver_immediately);
  b.info.actors.push_back({actor_name(b, "router", cfg), "router", "", router_hdl});
  if (b.settings.once || !cfg.deliver_immediately)
    return;
  d.listener = b.sys.spawn(event_watcher, cfg.database_url, cfg.names, router_hdl);
  caf::anon_send(router_hdl, listener_atom::value, d.listener);
}

void spawn_sweeper(node_bootstrap& b, const config& cfg) {
  auto s = b.sys.spawn<caf::detached>(sweeper,
                                      delivery_store(cfg, commit_mode::relay_progress),
                                      cfg.batch_size, pass_of(b, cfg, "sweeper"),
                                      b.actors.agent, b.results, cfg.queues());
  b.actors.sweepers.push_back(s);
  b.info.actors.push_back({actor_name(b, "sweeper", cfg), "sweeper", "", s});
}

/// Retention goes with the sweeper: every such node runs it, the one that
/// holds the retention lock deletes (actors/retention.hpp). With several
/// databases it follows the sweeper's leader, and a node that does not
/// lead lets go of the lock (retention_role::stand_aside).
void spawn_retention(node_bootstrap& b, const config& cfg) {
  if (!cfg.retention.enabled)
    return;
  auto store = std::make_shared<db_retention_store>(cfg.database_url, cfg.names);
  auto r = b.sys.spawn<caf::detached>(retention, store, cfg.retention,
                                      pass_of(b, cfg, "sweeper"), b.actors.agent);
  b.actors.retentions.push_back(r);
  b.info.actors.push_back({actor_name(b, "retention", cfg), "retention", "", r});
}

// One database's helpers and roles of its own: the ready listener of its
// dispatchers, its router, sweeper and retention.
void spawn_database_roles(node_bootstrap& b, const config& cfg,
                          database_actors& d) {
  auto& s = b.settings;
  spawn_ready_listener(b, cfg, d);
  if (s.has(node_role::router))
    spawn_router(b, cfg, d);
  if (s.has(node_role::sweeper)) {
    spawn_sweeper(b, cfg);
    spawn_retention(b, cfg);
  }
}

} // namespace

std::vector<const config*> served_databases(const cluster_config& all,
                                            const node_settings& settings) {
  std::vector<const config*> out;
  for (auto& db : all.databases)
    if (settings.databases.empty()
        || std::find(settings.databases.begin(), settings.databases.end(),
                     db.database)
             != settings.databases.end())
      out.push_back(&db);
  return out;
}

caf::error spawn_node_roles(node_bootstrap& b) {
  auto& s = b.settings;
  // In this order: the agent joins the status actor spawned before it; the
  // dispatchers report to the agent; each database's ready listener and
  // router wake its dispatchers. Per queue, its dispatchers (one per
  // database that routes to it) come before its result handler, which is
  // also the order of the status view.
  if (s.has(node_role::status))
    if (auto err = spawn_status(b))
      return err;
  spawn_agent(b);
  auto dbs = served_databases(b.all, s);
  auto& per_db = b.actors.databases;
  per_db.resize(dbs.size());
  for (size_t i = 0; i < dbs.size(); ++i) {
    per_db[i].database = dbs[i]->database;
    b.info.databases.push_back(dbs[i]->database);
  }
  for (auto& q : b.info.queues) {
    if (s.has(node_role::dispatcher))
      for (size_t i = 0; i < dbs.size(); ++i)
        if (routes_to(*dbs[i], q))
          spawn_dispatcher(b, *dbs[i], per_db[i], q);
    if (s.has(node_role::results))
      spawn_result_handler(b, q, dbs);
  }
  for (size_t i = 0; i < dbs.size(); ++i)
    spawn_database_roles(b, *dbs[i], per_db[i]);
  return caf::none;
}

} // namespace outbox
