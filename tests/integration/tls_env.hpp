// The TLS side of the test servers (tools/lib/services.sh): the folder of
// the test certificates and the broker's amqps:// URL. Tests that need TLS
// skip with a message when the variables are unset (servers named by hand);
// tools/test always sets them.
#pragma once

#include <cstdlib>
#include <string>

namespace outbox::testing {

/// OUTBOX_TEST_TLS_DIR: ca.pem, client.pem/.key, server.pem/.key and
/// other/ca.pem (a CA that signed nothing); empty when unset.
inline std::string tls_dir() {
  const char* v = std::getenv("OUTBOX_TEST_TLS_DIR");
  return v ? v : "";
}

/// OUTBOX_TEST_AMQPS_URL: amqps://guest:guest@localhost:PORT/?cacertfile=...
inline std::string amqps_url() {
  const char* v = std::getenv("OUTBOX_TEST_AMQPS_URL");
  return v ? v : "";
}

} // namespace outbox::testing
