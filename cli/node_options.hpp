// The command line of an outboxd node: its roles, queues and cluster
// addresses as CAF parsed them, checked as a whole into the node_settings
// the bootstrap takes, before anything starts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/node_settings.hpp"
#include "core/config/config.hpp"
#include "cli/tls_flags.hpp"

namespace outbox {

/// The default status address: loopback only, unless told otherwise.
constexpr uint16_t default_status_port = 4250;

/// The raw command-line values, as CAF parsed them.
struct node_flags {
  std::vector<std::string> roles, queues, databases;
  std::string listen, join;
  bool once = false;
  bool insecure = false; ///< plain BASP off loopback, on purpose
  tls_flags tls;
  int64_t sleep = 1;
};

/// Parses "HOST:PORT", or "PORT" alone (host `default_host`).
caf::expected<host_port> parse_host_port(const std::string& text,
                                         const std::string& default_host);

/// Checks the flags against each other and the config; every problem is
/// reported at once (errc::config_invalid, one per line).
caf::expected<node_settings> make_node_settings(const node_flags& flags,
                                                const cluster_config& all);

/// The same for a config of one database.
caf::expected<node_settings> make_node_settings(const node_flags& flags,
                                                const config& cfg);

} // namespace outbox
