// The AMQP URL every process takes (amqp:// or amqps://), split into what
// amqp_client needs to connect. Kept apart from the client so that the
// config check can parse a URL without connecting.
#pragma once

#include <optional>
#include <string>

#include <caf/expected.hpp>

namespace outbox {

struct amqp_url_parts {
  std::string host, user, password, vhost;
  int port = 5672;
  /// `?heartbeat=N` (seconds, 0..3600) as in RabbitMQ's URI spec; nullopt
  /// when the URL does not say.
  std::optional<int> heartbeat;
  /// amqps://: TLS with peer and host name verification (always on).
  bool tls = false;
  /// `?cacertfile=PATH`: the CA file (PEM) the broker's certificate must
  /// chain to; empty means the system's CA bundle.
  std::string cacertfile;
  /// `?certfile=PATH&keyfile=PATH`: a client certificate and its key (PEM),
  /// both or neither.
  std::string certfile, keyfile;
};

/// Parses amqp[s]://user:password@host:port/vhost[?query], the query
/// holding heartbeat=N and, with amqps only, cacertfile, certfile and
/// keyfile (file paths, percent-encoded where needed). amqps defaults to
/// port 5671. errc::invalid_url without echoing the URL (it may hold a
/// password).
caf::expected<amqp_url_parts> parse_amqp_url(const std::string& url);

} // namespace outbox
