#define CAF_SUITE faults.idle
#include <caf/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "tests/faults/fault_cluster.hpp"
#include "tests/faults/private_services.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

constexpr int heartbeat_seconds = 2;

// A broker that proposes a 2 s heartbeat, so that idle connections are
// closed within seconds unless their clients keep them alive; routes
// without retries, so that a lost publish would fail its delivery for good.
struct fixture : private_services, fault_cluster {
  fixture() : private_services(heartbeat_seconds), fault_cluster("[]", 30) {}

  // The broker's log lines about clients it gave up on.
  int missed_heartbeats() {
    int n = 0;
    for (auto& f : std::filesystem::directory_iterator{broker_log_dir()}) {
      std::ifstream in{f.path()};
      std::string line;
      while (std::getline(in, line))
        n += line.find("missed heartbeats") != std::string::npos;
    }
    return n;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(idle_faults, fixture)

CAF_TEST(after a quiet spell of several heartbeats events complete at once) {
  start_all();
  start_workers();
  publish_in_background(50, 0);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 100; }));
  // Quiet for five heartbeat intervals: the broker closes a silent client
  // after two, so by then every connection must have shown it is alive.
  auto quiet = std::chrono::seconds{5 * heartbeat_seconds};
  CAF_CHECK(!wait_until([&] { return missed_heartbeats() > 0; }, quiet));
  publish_in_background(50, 0);
  auto v = settle(std::chrono::seconds{30});
  check("idle", v);
  CAF_CHECK_EQUAL(missed_heartbeats(), 0);
  // No attempt failed (attempts counts the failed ones): no publish was
  // lost to a dead connection.
  auto attempts = must_exec(db, "SELECT count(*) FROM " + all_deliveries(names)
                                  + " d WHERE attempts <> 0");
  CAF_CHECK_EQUAL(attempts.int64(0, 0), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
