// The integration-test binary's main: suites need the OUTBOX_TEST_* servers.
#define CAF_SUITE integration.main
#include <caf/test/unit_test_impl.hpp>

#include <csignal>

namespace {

// The tests are clients of sockets that the servers under test may close
// first (a 413 before a body is read, a node stopping): a write then must
// fail with EPIPE, not end the test binary.
const bool sigpipe_ignored = (std::signal(SIGPIPE, SIG_IGN), true);

} // namespace
