// The TLS flags of outboxd and outboxctl: the files of mutual TLS between
// nodes (actors/node_tls.hpp), all or none of them.
#pragma once

#include <optional>
#include <string>

#include <caf/config_option_adder.hpp>
#include <caf/expected.hpp>

#include "actors/node_settings.hpp"

namespace outbox {

/// The raw values, as CAF parsed them.
struct tls_flags {
  std::string certificate, key, ca_file, passphrase_file;
};

/// Adds --tls-cert, --tls-key, --tls-ca and --tls-key-passphrase-file.
void add_tls_flags(caf::config_option_adder& group, tls_flags& flags);

/// nullopt when no TLS flag is given; otherwise the files, with the
/// passphrase read from its file. Errors (errc::config_invalid) when only
/// some are given: caf_openssl without a CA, or without a certificate and
/// key, authenticates nobody.
caf::expected<std::optional<node_tls>> read_tls_flags(const tls_flags& flags);

} // namespace outbox
