#define CAF_SUITE integration.amqp_client
#include <caf/test/unit_test.hpp>
