#define CAF_SUITE integration.event_store
#include <caf/test/unit_test.hpp>
