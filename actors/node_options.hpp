// What one outboxd process runs: its roles, queues and cluster addresses,
// checked as a whole before anything starts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/config/config.hpp"

namespace outbox {

struct host_port {
  std::string host;
  uint16_t port = 0;
};

struct node_options {
  std::vector<std::string> roles; ///< status, router, dispatcher, results, sweeper
  std::vector<std::string> queues; ///< for dispatchers and result handlers
  std::optional<host_port> listen; ///< where the status actor is published
  std::optional<host_port> join;   ///< the status node of the cluster
  bool once = false;
  int sleep_seconds = 1;

  bool has(const std::string& role) const;
};

/// The default status address: loopback only, unless told otherwise.
constexpr uint16_t default_status_port = 4250;

/// The raw command-line values, as CAF parsed them.
struct node_flags {
  std::vector<std::string> roles, queues;
  std::string listen, join;
  bool once = false;
  int64_t sleep = 1;
};

/// Parses "HOST:PORT", or "PORT" alone (host `default_host`).
caf::expected<host_port> parse_host_port(const std::string& text,
                                         const std::string& default_host);

/// Checks the flags against each other and the config; every problem is
/// reported at once (errc::config_invalid, one per line).
caf::expected<node_options> make_node_options(const node_flags& flags,
                                              const config& cfg);

} // namespace outbox
