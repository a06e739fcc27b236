// The TLS side of the test servers (tools/lib/services.sh): the folder of
// the test certificates and the broker's amqps:// URL. Tests that need TLS
// skip with a message when the variables are unset (servers named by hand);
// tools/test always sets them.
#pragma once

#include <cstdlib>
#include <string>

#include <caf/test/unit_test.hpp>

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

/// True when both are set; says why the test is skipped otherwise.
inline bool tls_servers_named() {
  if (!tls_dir().empty() && !amqps_url().empty())
    return true;
  CAF_MESSAGE("skipped: OUTBOX_TEST_TLS_DIR or OUTBOX_TEST_AMQPS_URL is not set "
              "(tools/test sets both)");
  return false;
}

} // namespace outbox::testing
