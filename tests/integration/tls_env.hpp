// The TLS side of the test servers (tools/lib/services.sh): the folder of
// the test certificates and the broker's amqps:// URL. A suite that needs
// TLS is skipped as a whole, and reported to CTest as skipped, when the
// variables are unset (servers named by hand); tools/test always sets them.
#pragma once

#include <cstdlib>
#include <iostream>
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

/// The exit code of a suite that cannot run here: its CTest entry has
/// SKIP_RETURN_CODE set to it (tests/CMakeLists.txt), so it counts as
/// skipped, never as passed.
constexpr int skip_exit_code = 77;

/// The first base of a TLS suite's fixture: without both variables it ends
/// the test binary (one suite per CTest entry) with skip_exit_code, before
/// the rest of the fixture makes anything that would need cleaning up. Run
/// by hand over several suites, the binary stops at the first TLS one.
struct tls_required {
  tls_required() {
    if (!tls_dir().empty() && !amqps_url().empty())
      return;
    std::cerr << "skipped: OUTBOX_TEST_TLS_DIR or OUTBOX_TEST_AMQPS_URL is not "
                 "set (tools/test sets both)\n";
    std::exit(skip_exit_code);
  }
};

} // namespace outbox::testing
