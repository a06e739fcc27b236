#define CAF_SUITE integration.routing
#include <caf/test/unit_test.hpp>
