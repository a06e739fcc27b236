#define CAF_SUITE integration.wake_ups
#include <caf/test/unit_test.hpp>

#include <csignal>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/test_worker.hpp"
#include "status_view/status_report.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// A router node and a dispatcher node that know nothing of each other: no
// status node, no --join. With --sleep 30 a delivery that is not woken
// waits up to 30 s for its dispatcher's timer.
struct wake_fixture : cluster_fixture {
  std::string q = queue("jobs");
  std::string dir = "/tmp/" + queue_prefix;
  std::string config_path = dir + "outbox.json";

  wake_fixture() {
    write_config_file(config_path,
                      "{\"e\": [{\"job\": \"J\", \"queue\": \"" + q
                        + "\", \"retryDelaysSeconds\": [1], "
                          "\"deliveryTimeoutSeconds\": 30}]}");
  }

  std::unique_ptr<child_process> start(const std::string& name,
                                       std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path, "--sleep", "30"});
    return std::make_unique<child_process>(OUTBOXD_PATH, args,
                                           dir + name + ".log");
  }
};

cluster_status one_node(std::string degraded) {
  cluster_status s;
  node_view n;
  n.name = "d:1";
  n.roles = {"dispatcher"};
  n.wakeups_degraded = std::move(degraded);
  s.nodes.push_back(n);
  return s;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(wake_up_tests, wake_fixture)

CAF_TEST(a router wakes the dispatchers of another node without a status node) {
  CAF_MESSAGE("logs in " << dir << "*.log");
  auto r = start("router", {"--roles", "router"});
  auto d = start("dispatcher", {"--roles", "dispatcher,results", "--queues", q});
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::completed;
                     }};
  // One after the other: each event finds the dispatcher idle, its next
  // timer up to 30 s away, so only a wake-up completes it in time.
  for (int i = 1; i <= 3; ++i) {
    publish("e", "{}");
    CAF_REQUIRE(wait_until([&] { return count_status("completed") == i; },
                           std::chrono::seconds{10}));
  }
  for (auto* p : {d.get(), r.get()})
    p->signal(SIGTERM);
  CAF_CHECK_EQUAL(d->wait(), 0);
  CAF_CHECK_EQUAL(r->wait(), 0);
}

CAF_TEST(the status view shows a node whose wake ups are degraded) {
  auto degraded = one_node("listen connection lost");
  auto table = status_table(degraded, true);
  CAF_CHECK_NOT_EQUAL(table.find("wake-ups DEGRADED (dispatchers wait for "
                                 "their timers): listen connection lost"),
                      std::string::npos);
  auto json = status_json(degraded, true);
  CAF_CHECK_NOT_EQUAL(json.find("\"wakeupsOk\":false,\"wakeupsDegraded\":"
                                "\"listen connection lost\""),
                      std::string::npos);
  auto fine = one_node("");
  CAF_CHECK_EQUAL(status_table(fine, true).find("DEGRADED"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(status_json(fine, true).find("\"wakeupsOk\":true"),
                      std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
