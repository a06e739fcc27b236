#define CAF_SUITE integration.demo
#include <caf/test/unit_test.hpp>

#include <cstdio>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// README's first command in its short, non-interactive mode, on the test
// servers and on this fixture's own tables and queues.
struct fixture : cluster_fixture {
  std::string stock = queue("stock.publish");
  std::string search = queue("search.index");
  std::string mail = queue("mail.send");
  std::string path = "/tmp/" + queue_prefix + "demo.json";

  fixture() {
    auto route = [](const std::string& job, const std::string& q,
                    const std::string& extra) {
      return "{\"job\": \"" + job + "\", \"queue\": \"" + q
             + "\", \"deliveryTimeoutSeconds\": 2, " + extra + "}";
    };
    write_config_file(
      path,
      "{\"stock.available_changed\": ["
        + route("PublishStockJob", stock, "\"retryDelaysSeconds\": [1, 2]") + ", "
        + route("IndexStockJob", search,
                "\"retryDelaysSeconds\": [1, 2], \"repeatLastDelay\": true, "
                "\"ttlSeconds\": 8, \"merge\": \"json-merge\"")
        + "], \"order.placed\": ["
        + route("SendConfirmationJob", mail, "\"retryDelaysSeconds\": [1]")
        + "]}",
      50);
  }

  ~fixture() {
    std::remove(path.c_str());
    db.exec("drop_inbox", "DROP TABLE IF EXISTS " + names.events + "_inbox");
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(demo_tests, fixture)

CAF_TEST(the demo drives every event to a final state and stops cleanly) {
  std::string bin_dir = OUTBOXD_PATH;
  bin_dir = bin_dir.substr(0, bin_dir.rfind('/'));
  auto [rc, out] = run_command(
    "OUTBOX_BIN_DIR='" + bin_dir + "' OUTBOX_DATABASE_URL='" + database_url()
    + "' OUTBOX_AMQP_URL='" + amqp_url() + "' " + OUTBOX_SOURCE_DIR
    + "/tools/demo --events 30 --rate 10 --exit-when-done --config " + path);
  CAF_CHECK_EQUAL(rc, 0);
  CAF_CHECK_NOT_EQUAL(out.find("all 30 events reached a final state"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(out.find("nodes: 3"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(out.find("stopping the cluster"), std::string::npos);
  if (rc != 0)
    CAF_MESSAGE("demo output:\n" << out);
  auto events = must_exec(db, "SELECT count(*) FROM " + names.events);
  CAF_CHECK_EQUAL(events.int64(0, 0), 30);
  CAF_CHECK_EQUAL(open_deliveries(), 0);
  CAF_CHECK_GREATER(count_status("completed"), 0);
  // The mail worker ran its confirmations in the inbox: a record for each
  // one whose handler finished, at most one per delivery.
  auto confirmations = must_exec(db, "SELECT count(*) FROM " + all_deliveries(names)
                                       + " d WHERE job = 'SendConfirmationJob'")
                         .int64(0, 0);
  auto recorded = must_exec(db, "SELECT count(*) FROM " + names.events + "_inbox")
                    .int64(0, 0);
  CAF_CHECK_GREATER(recorded, 0);
  CAF_CHECK_LESS_OR_EQUAL(recorded, confirmations);
  // Nothing of the demo keeps running after it returned.
  // "[o]" keeps pgrep from matching the shell that runs it.
  auto left = run_command("pgrep -f '[o]utboxd --config " + path + "'");
  CAF_CHECK_NOT_EQUAL(left.first, 0);
}

CAF_TEST(the demo refuses bad flags) {
  auto [rc, out] = run_command(std::string{OUTBOX_SOURCE_DIR}
                               + "/tools/demo --exit-when-done");
  CAF_CHECK_EQUAL(rc, 2);
  CAF_CHECK_NOT_EQUAL(out.find("--exit-when-done needs --events N"),
                      std::string::npos);
  CAF_CHECK_EQUAL(run_command(std::string{OUTBOX_SOURCE_DIR}
                              + "/tools/demo --events many").first,
                  2);
}

CAF_TEST(the example worker refuses a queue with jobs it cannot run) {
  std::string bin_dir = OUTBOXD_PATH;
  bin_dir = bin_dir.substr(0, bin_dir.rfind('/'));
  auto odd = "/tmp/" + queue_prefix + "odd.json";
  write_config_file(odd, "{\"e\": [{\"job\": \"PublishStockJob\", \"queue\": \""
                           + stock + "\"}, {\"job\": \"CookDinnerJob\", "
                           "\"queue\": \"" + stock + "\"}]}");
  auto [rc, out] = run_command(bin_dir + "/example_worker --config " + odd
                               + " --queue " + stock);
  CAF_CHECK_EQUAL(rc, 2);
  CAF_CHECK_NOT_EQUAL(out.find("no handler for the routed job(s) CookDinnerJob"),
                      std::string::npos);
  std::remove(odd.c_str());
}

CAF_TEST_FIXTURE_SCOPE_END()
