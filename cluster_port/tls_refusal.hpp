#pragma once

#include <optional>

#include <openssl/ssl.h>

#include "cluster_port/handshake_table.hpp"

namespace outbox::cluster_port {

/// What an SSL_accept that returned `ret` on `ssl` means: nothing while
/// the handshake waits for the peer, else why it failed. Reads OpenSSL's
/// error queue, which the caller cleared before the call (so it holds this
/// call's errors only), and leaves it as it is.
std::optional<refusal> tls_refusal(SSL* ssl, int ret);

} // namespace outbox::cluster_port
