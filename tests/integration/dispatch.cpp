#define CAF_SUITE integration.dispatch
#include <caf/test/unit_test.hpp>
