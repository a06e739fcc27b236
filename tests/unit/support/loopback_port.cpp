#define CAF_SUITE support.loopback_port
#include <caf/test/unit_test.hpp>

#include <fstream>
#include <set>

#include "tests/support/loopback_port.hpp"

using namespace outbox;

// A port inside the kernel's range for outgoing connections can be taken by
// any client's connection before the test's server binds it (CI once lost a
// PostgreSQL start that way), so none is ever handed out.
CAF_TEST(ports are picked outside the range of outgoing connections) {
  int low = 0, high = 0;
  std::ifstream in{"/proc/sys/net/ipv4/ip_local_port_range"};
  CAF_REQUIRE(static_cast<bool>(in >> low >> high));
  for (int i = 0; i < 200; ++i) {
    auto port = free_loopback_port();
    CAF_REQUIRE_NOT_EQUAL(port, 0);
    CAF_CHECK(port < low || port > high);
    CAF_CHECK(port >= 1024);
  }
}

CAF_TEST(ports spread so that concurrent tests rarely meet) {
  std::set<uint16_t> seen;
  for (int i = 0; i < 50; ++i)
    seen.insert(free_loopback_port());
  CAF_CHECK_GREATER(seen.size(), 40u);
}
