// A node's HTTP endpoint (outboxd --http): /metrics, /healthz, /readyz
// and, on a status node, /api/status and the dashboard (/). cpp-httplib serves it on threads of
// its own, never on CAF's scheduler: each request asks the node's actors
// with a deadline, so a slow or stuck actor costs a 503, not a hung client,
// and a slow client holds one of the endpoint's threads, not the relay.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "actors/status_actor.hpp"
#include "actors/node_settings.hpp"
#include "http/node_health.hpp"

namespace outbox {

struct http_settings {
  host_port where;
  /// HTTPS with client certificates checked against the CA (the node's
  /// own --tls-* files); plain HTTP when unset.
  std::optional<node_tls> tls;
  health_rules health;
  std::string version;
};

struct http_targets {
  node_agent_actor agent;
  status_actor status; ///< null on a node without the status role
};

class http_endpoint {
public:
  /// Binds and starts serving; errc::config_invalid when the address cannot
  /// be bound or the TLS files not loaded.
  static caf::expected<std::unique_ptr<http_endpoint>>
  start(caf::actor_system& sys, http_targets targets, http_settings settings);

  ~http_endpoint(); ///< stops serving and joins its threads

  uint16_t port() const;

  struct impl;

private:
  explicit http_endpoint(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace outbox
