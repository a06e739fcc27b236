#include "http/http_endpoint.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <sys/socket.h>
#include <thread>

#include <httplib.h>

#include <caf/scoped_actor.hpp>

#include "cluster_port/guard.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "http/dashboard_files.hpp"
#include "http/newest_first_queue.hpp"
#include "http/node_metrics.hpp"
#include "http/process_stats.hpp"
#include "status_view/status_report.hpp"
#include "core/base/timestamp.hpp"

namespace outbox {

namespace {

constexpr auto ask_timeout = std::chrono::seconds{2};
/// The status node's view is reused for a second, or for 20 times as long
/// as the last one took to read: the counts scan the deliveries table, so
/// however often anyone scrapes, they cost the database at most a twentieth
/// of its time (a million rows take ~200 ms: one read every 4 s).
constexpr int64_t cluster_cache_ms = 1000;
constexpr int64_t cluster_cache_cost_factor = 20;
constexpr size_t worker_threads = 16;
constexpr size_t max_request_body = 4096;

template <class Reply, class Handle>
std::optional<Reply> ask(caf::actor_system& sys, const Handle& h) {
  if (!h)
    return std::nullopt;
  std::optional<Reply> out;
  caf::scoped_actor self{sys};
  self->request(h, ask_timeout, status_atom::value)
    .receive([&](Reply& r) { out = std::move(r); }, [](caf::error&) {});
  return out;
}

} // namespace

struct http_endpoint::impl {
  caf::actor_system& sys;
  http_targets targets;
  http_settings settings;
  std::unique_ptr<httplib::Server> server;
  std::thread thread;
  int port = 0;
  std::mutex cache_mutex;
  std::optional<cluster_status> cached;
  int64_t cached_ms = 0;
  int64_t read_cost_ms = 0; ///< how long the last read of the view took

  impl(caf::actor_system& s, http_targets t, http_settings st)
    : sys(s), targets(std::move(t)), settings(std::move(st)) {
  }

  std::optional<cluster_status> cluster() {
    if (!targets.status)
      return std::nullopt;
    std::lock_guard<std::mutex> guard{cache_mutex};
    auto now = now_ms();
    auto max_age = std::max(cluster_cache_ms, cluster_cache_cost_factor * read_cost_ms);
    if (!cached || now - cached_ms >= max_age) {
      cached = ask<cluster_status>(sys, targets.status);
      cached_ms = now_ms();
      read_cost_ms = cached_ms - now;
    }
    return cached;
  }

  void routes();
  void limits();
};

void http_endpoint::impl::routes() {
  auto& s = *server;
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    auto report = ask<node_report>(sys, targets.agent);
    if (!report) {
      res.status = 503;
      res.set_content("the node's agent did not answer in time\n", "text/plain");
      return;
    }
    metrics_input in{std::move(*report), read_process_stats(), now_ms(),
                     settings.version, cluster(), std::nullopt};
    if (cluster_port::watched())
      in.cluster_port = cluster_port::figures();
    res.set_content(render_node_metrics(in), "text/plain; version=0.0.4");
  });
  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    auto v = liveness(ask<node_report>(sys, targets.agent));
    res.status = v.ok ? 200 : 503;
    res.set_content(health_json(v), "application/json");
  });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    auto v = readiness(ask<node_report>(sys, targets.agent), settings.health,
                       now_ms());
    res.status = v.ok ? 200 : 503;
    res.set_content(health_json(v), "application/json");
  });
  s.Get("/api/status", [this](const httplib::Request&, httplib::Response& res) {
    if (!targets.status) {
      res.status = 404;
      res.set_content("{\"error\": \"this node has no status role\"}\n",
                      "application/json");
      return;
    }
    auto c = cluster();
    res.status = c ? 200 : 503;
    res.set_content(c ? status_json(*c, true) + "\n"
                      : "{\"error\": \"the status actor did not answer in time\"}\n",
                    "application/json");
  });
  // The live dashboard at "/" (http/dashboard/), reading /api/status.
  add_dashboard_routes(s, static_cast<bool>(targets.status));
}

void http_endpoint::impl::limits() {
  auto& s = *server;
  // Nothing we serve takes a body; headers and URIs are bounded by
  // cpp-httplib itself (8 KiB URI). A client that stops sending is dropped
  // after the read timeout, an idle connection after the keep-alive one;
  // newest connections first, so that a flood of idle ones delays a fresh
  // request by one such timeout at most.
  s.set_payload_max_length(max_request_body);
  s.set_read_timeout(2, 0);
  s.set_write_timeout(5, 0);
  s.set_keep_alive_timeout(2);
  s.set_keep_alive_max_count(100);
  s.new_task_queue = [] { return new newest_first_queue(worker_threads); };
}

caf::expected<std::unique_ptr<http_endpoint>>
http_endpoint::start(caf::actor_system& sys, http_targets targets,
                     http_settings settings) {
  auto p = std::make_unique<impl>(sys, std::move(targets), std::move(settings));
  auto& st = p->settings;
  if (st.tls) {
    auto ssl = std::make_unique<httplib::SSLServer>(
      st.tls->certificate.c_str(), st.tls->key.c_str(), st.tls->ca_file.c_str(),
      nullptr, st.tls->passphrase.empty() ? nullptr : st.tls->passphrase.c_str());
    if (!ssl->is_valid())
      return make_error(errc::config_invalid,
                        "--http: the TLS files could not be loaded");
    p->server = std::move(ssl);
  } else {
    p->server = std::make_unique<httplib::Server>();
  }
  p->limits();
  p->routes();
  // cpp-httplib's default options set SO_REUSEPORT, with which a second
  // process binds the same port without an error and takes half of its
  // requests: SO_REUSEADDR only (a restart is not held up by TIME_WAIT).
  int listener = -1;
  p->server->set_socket_options([&listener](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listener = sock;
  });
  auto& w = st.where;
  p->port = w.port == 0 ? p->server->bind_to_any_port(w.host)
                        : (p->server->bind_to_port(w.host, w.port) ? w.port : -1);
  // Its listen backlog is 5: a burst of connections (many scrapers, or a
  // flood) would see SYNs dropped and retried a second later. Linux lets a
  // second listen() raise it.
  if (p->port > 0 && listener >= 0)
    ::listen(listener, SOMAXCONN);
  if (p->port <= 0)
    return make_error(errc::config_invalid,
                      "--http: cannot listen on " + w.host + ":"
                        + std::to_string(w.port)
                        + " (in use, or not an address of this host)");
  auto* server = p->server.get();
  p->thread = std::thread{[server] { server->listen_after_bind(); }};
  logger("node")->info("event=http_listening host={} port={} tls={}", kv(w.host),
                       p->port, st.tls ? "mutual" : "off");
  return std::unique_ptr<http_endpoint>{new http_endpoint{std::move(p)}};
}

http_endpoint::http_endpoint(std::unique_ptr<impl> p) : impl_(std::move(p)) {
}

http_endpoint::~http_endpoint() {
  impl_->server->stop();
  if (impl_->thread.joinable())
    impl_->thread.join();
}

uint16_t http_endpoint::port() const {
  return static_cast<uint16_t>(impl_->port);
}

} // namespace outbox
