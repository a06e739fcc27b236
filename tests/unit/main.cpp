// The unit-test binary's main: every suite in tests/unit/ links in here.
#define CAF_SUITE core.main
#include <caf/test/unit_test_impl.hpp>
