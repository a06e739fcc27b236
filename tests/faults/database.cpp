#define CAF_SUITE faults.database
#include <caf/test/unit_test.hpp>

#include <fstream>

#include "tests/faults/fault_cluster.hpp"
#include "tests/faults/private_services.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct fixture : private_services, fault_cluster {
  // Whether a node's log mentions the database being unavailable.
  bool noticed(const std::string& node) {
    std::ifstream in{dir + node + ".log"};
    std::string line;
    while (std::getline(in, line))
      if (line.find("database_unavailable") != std::string::npos
          || line.find("database_error") != std::string::npos)
        return true;
    return false;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(database_faults, fixture)

CAF_TEST(PostgreSQL restarted and then stopped a while loses nothing) {
  start_all();
  start_workers();
  // Events keep coming through both faults, however long each takes.
  keep_publishing(150);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") >= 100; }));
  stop_database();
  start_database();
  db = connect_db();
  auto completed = count_status("completed");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") >= completed + 100; },
                         std::chrono::seconds{120}));
  stop_database();
  // Down until the relay's nodes have seen it.
  CAF_REQUIRE(wait_until([&] { return noticed("router") && noticed("dispatcher"); },
                         std::chrono::seconds{120}));
  start_database();
  db = connect_db();
  auto v = settle();
  check("database restarted, then stopped", v);
  CAF_CHECK_LESS(warning_lines("dispatcher"), 40);
  CAF_CHECK_LESS(warning_lines("router"), 40);
}

CAF_TEST_FIXTURE_SCOPE_END()
