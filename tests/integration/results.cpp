#define CAF_SUITE integration.results
#include <caf/test/unit_test.hpp>
