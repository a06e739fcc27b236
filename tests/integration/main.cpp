// The integration-test binary's main: suites need the OUTBOX_TEST_* servers.
#define CAF_SUITE integration.main
#include <caf/test/unit_test_impl.hpp>
