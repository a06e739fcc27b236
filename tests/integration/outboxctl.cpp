#define CAF_SUITE integration.outboxctl
#include <caf/test/unit_test.hpp>
