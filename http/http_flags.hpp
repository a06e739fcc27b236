// outboxd --http [HOST:]PORT: where a node's HTTP endpoint listens, under
// the same exposure rule as the status port.
#pragma once

#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "actors/node_settings.hpp"

namespace outbox {

/// The status node's HTTP port when --http names no port.
constexpr uint16_t default_http_port = 4251;

/// nullopt for "" (off). "PORT" and "HOST:PORT" as for --listen (host
/// 127.0.0.1 by default); a HOST alone takes default_http_port on a status
/// node. Off loopback it takes the node's TLS (HTTPS, client certificates
/// checked against its CA) or --insecure; not with --once.
/// errc::config_invalid otherwise.
caf::expected<std::optional<host_port>>
read_http_flag(const std::string& text, const node_settings& node);

} // namespace outbox
