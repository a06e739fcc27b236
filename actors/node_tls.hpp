// Mutual TLS between the nodes, on CAF 0.17.6's caf_openssl module: its
// middleman actor stands in for the plain one wherever a node publishes the
// status actor or connects to it. CAF itself reads the files again for every
// connection and aborts on one it cannot load, so they are checked here
// before the actor system starts.
#pragma once

#include <string>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/expected.hpp>
#include <caf/io/middleman_actor.hpp>

#include "actors/status_actor.hpp"
#include "actors/node_settings.hpp"

namespace outbox {

/// Loads the certificate, the key (with its passphrase) and the CA bundle
/// the way CAF will, and checks that the key is the certificate's. Returns
/// the certificate's subject CN (errc::config_invalid naming the file).
caf::expected<std::string> check_node_tls(const node_tls& tls);

/// Hands the files to CAF's openssl options and loads its module; call
/// before the actor system is made from `cfg`.
void use_node_tls(caf::actor_system_config& cfg, const node_tls& tls);

/// The middleman actor connections to other nodes go through: the TLS one
/// when the openssl module is loaded, else the plain one.
caf::io::middleman_actor node_middleman(caf::actor_system& sys);

/// Publishes the status actor at `where` (TLS when the module is loaded);
/// returns the port bound.
caf::expected<uint16_t> publish_status_actor(caf::actor_system& sys,
                                       const status_actor& status,
                                       const host_port& where);

} // namespace outbox
