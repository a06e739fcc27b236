// Opens the socket of an amqp_client: plain TCP for amqp://, TLS through
// rabbitmq-c's amqp_ssl_socket for amqps:// (peer and host name verified).
// Errors name files and the broker's address, never rabbitmq-c's or
// OpenSSL's own text.
#pragma once

#include <sys/time.h>

#include <amqp.h>
#include <caf/error.hpp>

#include "core/amqp/amqp_url.hpp"

namespace outbox {

/// Opens a socket on `conn` (which owns it) to the URL's broker within
/// `timeout` (connect and TLS handshake).
caf::error open_amqp_socket(amqp_connection_state_t conn,
                            const amqp_url_parts& url, timeval timeout);

} // namespace outbox
