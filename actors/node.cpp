#include "actors/node.hpp"

#include <unistd.h>

#include <algorithm>

#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include "core/base/logging.hpp"
#include "core/base/text.hpp"
#include "core/domain/ready_notice.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// With TLS the certificate's CN comes first: the status view then shows
// which certificate each node started with (its own claim, see
// docs/operations.md "A cluster").
std::string node_name(const std::string& identity) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  auto name = std::string{host} + ":" + std::to_string(getpid());
  return identity.empty() ? name : identity + "@" + name;
}

void log_started(const node_bootstrap& b) {
  auto& join_at = b.settings.join;
  std::vector<std::string> dbs;
  for (auto& db : b.actors.databases)
    dbs.push_back(db.database);
  logger("node")->info("event=node_started node={} roles={} queues={} "
                       "databases={} statusPort={} join={} tls={} identity={}",
                       kv(b.info.name), kv(join(b.info.roles, ",")),
                       kv(join(b.info.queues, ",")), kv(join(dbs, ",")),
                       b.actors.status_port,
                       join_at ? kv(join_at->host + ":"
                                    + std::to_string(join_at->port))
                               : std::string{"none"},
                       b.settings.tls ? "mutual" : "off",
                       kv(b.settings.identity));
}

// Said at every start, so that a node left open by --insecure stays visible.
void warn_if_exposed(const node_settings& s) {
  if (s.tls || !s.listen || is_loopback_host(s.listen->host))
    return;
  logger("node")->warn("event=insecure_listen host={} port={} why={}",
                       kv(s.listen->host), s.listen->port,
                       kv("--insecure: plain BASP off loopback, anyone who "
                          "reaches this port can join the cluster"));
}

} // namespace

caf::expected<std::unique_ptr<node>>
node::start(caf::actor_system& sys, const config& cfg,
            const node_settings& settings) {
  cluster_config one;
  one.databases.push_back(cfg);
  return start(sys, one, settings);
}

caf::expected<std::unique_ptr<node>>
node::start(caf::actor_system& sys, const cluster_config& all,
            const node_settings& settings) {
  std::unique_ptr<node> n{new node(sys)};
  // The bootstrap refers to the config while it spawns; the actors keep
  // copies of what they need.
  node_bootstrap b{sys, all, settings, n->actors_, {}, {}, new_wake_origin(), nullptr,
                   nullptr};
  b.pass.idle = std::chrono::seconds{settings.sleep_seconds};
  b.pass.self_driven = !settings.once;
  b.info.name = node_name(settings.identity);
  // Each connection says whose it is: the status view counts them per
  // node and database (one name per process: the last node started).
  set_fallback_application_name("outboxd " + b.info.name);
  b.info.roles = role_names(settings.roles);
  if (settings.has_queue_roles())
    b.info.queues = settings.queues;
  if (auto err = spawn_node_roles(b)) {
    n->stop();
    return err;
  }
  log_started(b);
  warn_if_exposed(settings);
  if (n->actors_.agent)
    caf::anon_send(n->actors_.agent, join_atom::value, std::move(b.info));
  if (!settings.once)
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
  for (auto& db : actors_.databases) {
    watch(db.listener);
    watch(db.ready_listener);
  }
  watch(actors_.agent);
  watch(actors_.status);
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
  // The routers first, and waited for (a pass one is in ends first): a
  // delivery handed over after its dispatcher stopped would wait for its
  // delivery timeout (core/domain/handoff.hpp). A stopping dispatcher gives
  // back what it holds.
  caf::scoped_actor self{sys_};
  size_t routers = 0;
  for (auto& db : actors_.databases) {
    quit(db.listener);
    if (db.router) {
      self->monitor(db.router);
      quit(db.router);
      ++routers;
    }
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{5};
  for (bool late = false; routers > 0 && !late;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    self->receive([&](caf::down_msg&) { --routers; },
                  caf::after(std::max(left, std::chrono::milliseconds{0}))
                    >> [&] { late = true; });
  }
  for (auto& db : actors_.databases)
    quit(db.ready_listener);
  for_each_pass_actor(quit);
  quit(actors_.agent);
  if (actors_.status && actors_.status_port != 0)
    sys_.middleman().unpublish(actors_.status, actors_.status_port);
  quit(actors_.status);
}

} // namespace outbox
