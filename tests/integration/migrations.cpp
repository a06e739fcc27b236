#define CAF_SUITE integration.migrations
#include <caf/test/unit_test.hpp>
