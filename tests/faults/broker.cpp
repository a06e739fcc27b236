#define CAF_SUITE faults.broker
#include <caf/test/unit_test.hpp>

#include "tests/faults/fault_cluster.hpp"
#include "tests/faults/private_services.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Its own servers first: the scenarios stop them.
struct fixture : private_services, fault_cluster {};

} // namespace

CAF_TEST_FIXTURE_SCOPE(broker_faults, fixture)

CAF_TEST(RabbitMQ stopped while events flow loses nothing and logs little) {
  start_all();
  start_workers();
  // Events keep coming until the fault has done what this scenario is
  // about: however long stopping the broker takes, a backlog builds behind it.
  keep_publishing(150);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") >= 100; }));
  stop_broker();
  // Down until a backlog has built up behind it.
  auto before = count_status("pending");
  CAF_REQUIRE(wait_until([&] { return count_status("pending") >= before + 150; },
                         std::chrono::seconds{120}));
  start_broker();
  // Back: the relay publishes again, with new events still coming.
  auto completed = count_status("completed");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") >= completed + 100; },
                         std::chrono::seconds{120}));
  auto v = settle();
  check("broker stopped", v);
  // A first failure and summaries, not a line per attempt or per event.
  CAF_CHECK_LESS(warning_lines("dispatcher"), 40);
  CAF_CHECK_LESS(warning_lines("router"), 10);
}

CAF_TEST_FIXTURE_SCOPE_END()
