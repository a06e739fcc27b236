#include "actors/node.hpp"

#include <unistd.h>

#include <algorithm>

#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/dispatcher.hpp"
#include "actors/node_agent.hpp"
#include "actors/notify_listener.hpp"
#include "actors/ready_listener.hpp"
#include "actors/result_handler.hpp"
#include "actors/router.hpp"
#include "actors/status.hpp"
#include "actors/sweeper.hpp"
#include "core/amqp/amqp_endpoints.hpp"
#include "core/pg/db_stores.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/domain/ready_notice.hpp"
#include "core/base/text.hpp"

namespace outbox {

namespace {

constexpr auto confirm_timeout = std::chrono::seconds{10};
constexpr auto result_wait = std::chrono::milliseconds{250};

std::string node_name() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return std::string{host} + ":" + std::to_string(getpid());
}

} // namespace

caf::expected<std::unique_ptr<node>>
node::start(caf::actor_system& sys, const config& cfg, const node_options& opts) {
  std::unique_ptr<node> n{new node(sys)};
  pass_settings settings;
  settings.idle = std::chrono::seconds{opts.sleep_seconds};
  settings.self_driven = !opts.once;
  node_info info;
  info.name = node_name();
  info.roles = opts.roles;
  if (opts.has("dispatcher") || opts.has("results"))
    info.queues = opts.queues;
  if (!opts.once) {
    status_address target;
    if (opts.has("status")) {
      auto store = std::make_shared<db_status_store>(cfg.database_url, cfg.names);
      n->status_ = sys.spawn<caf::detached>(status, store);
      target.local = n->status_;
      if (opts.listen) {
        auto port = sys.middleman().publish(n->status_, opts.listen->port,
                                            opts.listen->host.c_str(), true);
        if (!port) {
          n->stop();
          return make_error(errc::config_invalid,
                            "cannot listen on " + opts.listen->host + ":"
                              + std::to_string(opts.listen->port)
                              + " (in use or not a local address)");
        }
        n->status_port_ = *port;
      }
    } else if (opts.join) {
      target.host = opts.join->host;
      target.port = opts.join->port;
    }
    n->agent_ = sys.spawn(node_agent, target);
  }
  auto store = [&](commit_mode mode) {
    return std::make_shared<db_delivery_store>(cfg.database_url, cfg.names, mode);
  };
  std::vector<dispatcher_entry> local;
  for (auto& q : info.queues) {
    if (opts.has("dispatcher")) {
      auto publisher = std::make_shared<amqp_job_publisher>(
        cfg.amqp_url, q, std::chrono::milliseconds{confirm_timeout});
      auto d = sys.spawn<caf::detached>(dispatcher,
                                        store(commit_mode::relay_progress),
                                        publisher, q,
                                        dispatch_limits{cfg.batch_size,
                                                        cfg.max_in_flight},
                                        settings,
                                        n->agent_);
      n->dispatchers_.push_back(d);
      local.push_back({q, d});
      info.actors.push_back({"dispatcher " + q, "dispatcher", q, d});
    }
    if (opts.has("results")) {
      // The prefetch bounds what one handler holds unacked: one batch.
      auto source = std::make_shared<amqp_result_source>(
        cfg.amqp_url, q, static_cast<uint16_t>(std::min(cfg.batch_size, 65535)));
      // Its results are acked once applied: they must be durable by then.
      auto r = sys.spawn<caf::detached>(result_handler,
                                        store(commit_mode::before_ack), source,
                                        q, cfg.batch_size, result_wait,
                                        settings, n->agent_);
      n->result_handlers_.push_back(r);
      info.actors.push_back({"results " + q, "results", q, r});
    }
  }
  // Tags this node's NOTIFYs of new deliveries: its own router wakes its
  // dispatchers directly, its ready listener skips them.
  auto origin = new_wake_origin();
  if (!opts.once && cfg.deliver_immediately && !local.empty())
    n->ready_listener_ = sys.spawn<caf::detached>(
      ready_listener, ready_listener_args{cfg.database_url,
                                          cfg.names.ready_channel(), origin,
                                          local, n->agent_});
  if (opts.has("router")) {
    std::optional<ready_notify> notify;
    if (cfg.deliver_immediately)
      notify = ready_notify{cfg.names.ready_channel(), origin};
    auto routes = std::make_shared<db_routing_store>(cfg.database_url,
                                                     cfg.names, cfg.routes,
                                                     std::move(notify));
    auto router_settings = settings;
    router_settings.linger = std::chrono::milliseconds{cfg.router_linger_ms};
    router_settings.linger_min_rows = cfg.router_linger_min_events;
    n->router_ = sys.spawn<caf::detached>(router, routes, cfg.batch_size, local,
                                          router_settings, n->agent_,
                                          cfg.deliver_immediately);
    info.actors.push_back({"router", "router", "", n->router_});
    if (!opts.once && cfg.deliver_immediately) {
      n->listener_ = sys.spawn(notify_listener, cfg.database_url,
                               cfg.names.notify_channel(), n->router_);
      caf::anon_send(n->router_, listener_atom::value, n->listener_);
    }
  }
  if (opts.has("sweeper")) {
    auto s = sys.spawn<caf::detached>(sweeper,
                                      store(commit_mode::relay_progress),
                                      cfg.batch_size, settings, n->agent_);
    n->sweepers_.push_back(s);
    info.actors.push_back({"sweeper", "sweeper", "", s});
  }
  logger("node")->info("event=node_started node={} roles={} queues={} "
                       "statusPort={} join={}",
                       kv(info.name), kv(join(opts.roles, ",")),
                       kv(join(info.queues, ",")), n->status_port_,
                       opts.join ? kv(opts.join->host + ":"
                                      + std::to_string(opts.join->port))
                                 : std::string{"none"});
  if (n->agent_)
    caf::anon_send(n->agent_, join_atom::value, std::move(info));
  if (!opts.once)
    n->for_each_pass_actor(
      [](const pass_actor& a) { caf::anon_send(a, wake_atom::value); });
  return n;
}

node::~node() {
  stop();
}

caf::error node::run_once() {
  caf::scoped_actor self{sys_};
  caf::error first;
  auto once = [&](const pass_actor& a) {
    self->request(a, caf::infinite, once_atom::value)
      .receive([](int64_t) {},
               [&](caf::error& err) {
                 if (!first)
                   first = err;
               });
  };
  for_each_pass_actor(once);
  return first;
}

bool node::await_stopped(std::chrono::seconds limit) {
  caf::scoped_actor self{sys_};
  size_t pending = 0;
  auto watch = [&](const auto& a) {
    if (a) {
      self->monitor(a);
      ++pending;
    }
  };
  watch(listener_);
  watch(ready_listener_);
  watch(agent_);
  watch(status_);
  for_each_pass_actor(watch);
  auto deadline = std::chrono::steady_clock::now() + limit;
  bool timed_out = false;
  while (pending > 0 && !timed_out) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    self->receive([&](caf::down_msg&) { --pending; },
                  caf::after(std::max(left, std::chrono::milliseconds{0}))
                    >> [&] { timed_out = true; });
  }
  return pending == 0;
}

void node::stop() {
  if (stopped_)
    return;
  stopped_ = true;
  auto quit = [](const auto& a) {
    if (a)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  };
  quit(listener_);
  quit(ready_listener_);
  for_each_pass_actor(quit);
  quit(agent_);
  if (status_ && status_port_ != 0)
    sys_.middleman().unpublish(status_, status_port_);
  quit(status_);
}

} // namespace outbox
