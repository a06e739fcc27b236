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

std::shared_ptr<db_delivery_store> delivery_store(const node_bootstrap& b,
                                                  commit_mode mode) {
  return std::make_shared<db_delivery_store>(b.cfg.database_url, b.cfg.names,
                                             mode);
}

/// The cluster's status actor, published at --listen (not with --once).
caf::error spawn_status(node_bootstrap& b) {
  if (b.settings.once)
    return caf::none;
  auto store = std::make_shared<db_status_store>(b.cfg.database_url, b.cfg.names);
  b.actors.status = b.sys.spawn<caf::detached>(status, store);
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
  b.actors.agent = b.sys.spawn(node_agent, target, b.results, b.settings.drain);
}

// Claim on route (core/domain/handoff.hpp): a node that routes hands new
// deliveries to its own dispatchers, unless deliveries wait for the
// dispatchers' timers (deliverImmediately: false) or passes run only on
// request (--once).
bool hands_over(const node_bootstrap& b) {
  return b.settings.has(node_role::router) && b.cfg.deliver_immediately
         && !b.settings.once;
}

void spawn_dispatcher(node_bootstrap& b, const std::string& queue) {
  std::shared_ptr<handoff_box> box;
  if (hands_over(b)) {
    box = std::make_shared<handoff_box>(queue);
    b.actors.handoffs.push_back(box);
  }
  auto publisher = std::make_shared<amqp_job_publisher>(
    b.cfg.amqp_url, queue, std::chrono::milliseconds{confirm_timeout},
    b.cfg.queue_type_of(queue));
  auto d = b.sys.spawn<caf::detached>(dispatcher,
                                      delivery_store(b, commit_mode::relay_progress),
                                      publisher, queue,
                                      dispatch_limits{b.cfg.batch_size,
                                                      b.cfg.max_in_flight},
                                      b.pass, b.actors.agent, box);
  b.actors.dispatchers.push_back(d);
  b.actors.local_dispatchers.push_back({queue, d});
  b.info.actors.push_back({"dispatcher " + queue, "dispatcher", queue, d});
}

void spawn_result_handler(node_bootstrap& b, const std::string& queue) {
  // The prefetch bounds what one handler holds unacked: one batch.
  auto source = std::make_shared<amqp_result_source>(
    b.cfg.amqp_url, queue, static_cast<uint16_t>(std::min(b.cfg.batch_size, 65535)),
    b.cfg.queue_type_of(queue));
  // Its results are acked once applied: they must be durable by then.
  auto r = b.sys.spawn<caf::detached>(result_handler,
                                      delivery_store(b, commit_mode::before_ack),
                                      source, queue, b.cfg.batch_size, result_wait,
                                      b.pass, b.actors.agent);
  b.actors.result_handlers.push_back(r);
  b.info.actors.push_back({"results " + queue, "results", queue, r});
}

/// Wakes this node's dispatchers on other nodes' NOTIFYs of new deliveries.
void spawn_ready_listener(node_bootstrap& b) {
  auto& local = b.actors.local_dispatchers;
  if (b.settings.once || !b.cfg.deliver_immediately || local.empty())
    return;
  b.actors.ready_listener = b.sys.spawn<caf::detached>(
    ready_listener,
    ready_listener_args{pg_listener::factory(b.cfg.database_url,
                                             b.cfg.names.ready_channel()),
                        b.cfg.names.ready_channel(), b.origin, local,
                        b.actors.agent});
}

/// The router, and its event watcher when it delivers immediately.
void spawn_router(node_bootstrap& b) {
  auto& cfg = b.cfg;
  std::optional<ready_notify> notify;
  if (cfg.deliver_immediately)
    notify = ready_notify{cfg.names.ready_channel(), b.origin};
  auto routes = std::make_shared<db_routing_store>(cfg.database_url, cfg.names,
                                                   cfg.routes, std::move(notify));
  auto settings = b.pass;
  settings.linger = std::chrono::milliseconds{cfg.router_linger_ms};
  settings.linger_min_rows = cfg.router_linger_min_events;
  auto& router_hdl = b.actors.router;
  router_hdl = b.sys.spawn<caf::detached>(router, routes, cfg.batch_size,
                                          b.actors.local_dispatchers,
                                          b.actors.handoffs, settings,
                                          b.actors.agent, cfg.deliver_immediately);
  b.info.actors.push_back({"router", "router", "", router_hdl});
  if (b.settings.once || !cfg.deliver_immediately)
    return;
  b.actors.listener = b.sys.spawn(event_watcher, cfg.database_url, cfg.names,
                                  router_hdl);
  caf::anon_send(router_hdl, listener_atom::value, b.actors.listener);
}

void spawn_sweeper(node_bootstrap& b) {
  auto s = b.sys.spawn<caf::detached>(sweeper,
                                      delivery_store(b, commit_mode::relay_progress),
                                      b.cfg.batch_size, b.pass, b.actors.agent,
                                      b.results, b.cfg.queues());
  b.actors.sweepers.push_back(s);
  b.info.actors.push_back({"sweeper", "sweeper", "", s});
}

/// Retention goes with the sweeper: every such node runs it, the one that
/// holds the retention lock deletes (actors/retention.hpp).
void spawn_retention(node_bootstrap& b) {
  if (!b.cfg.retention.enabled)
    return;
  auto store = std::make_shared<db_retention_store>(b.cfg.database_url,
                                                    b.cfg.names);
  auto r = b.sys.spawn<caf::detached>(retention, store, b.cfg.retention, b.pass,
                                      b.actors.agent);
  b.actors.retention = r;
  b.info.actors.push_back({"retention", "retention", "", r});
}

} // namespace

caf::error spawn_node_roles(node_bootstrap& b) {
  auto& s = b.settings;
  // In this order: the agent joins the status actor spawned before it; the
  // dispatchers report to the agent; the ready listener and the router wake
  // the dispatchers. Per queue, its dispatcher comes before its result
  // handler, which is also the order of the status view.
  if (s.has(node_role::status))
    if (auto err = spawn_status(b))
      return err;
  spawn_agent(b);
  for (auto& q : b.info.queues) {
    if (s.has(node_role::dispatcher))
      spawn_dispatcher(b, q);
    if (s.has(node_role::results))
      spawn_result_handler(b, q);
  }
  spawn_ready_listener(b);
  if (s.has(node_role::router))
    spawn_router(b);
  if (s.has(node_role::sweeper)) {
    spawn_sweeper(b);
    spawn_retention(b);
  }
  return caf::none;
}

} // namespace outbox
