#define CAF_SUITE integration.outboxd
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/help_checks.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

std::pair<int, std::string> outboxd(const std::string& args) {
  return run_command("env -u OUTBOX_DATABASE_URL -u OUTBOX_AMQP_URL "
                     + std::string{OUTBOXD_PATH} + " " + args);
}

struct fixture : cluster_fixture {
  std::string q = queue("once");
  std::string path = "/tmp/" + queue_prefix + "outboxd.json";

  fixture() {
    write_config_file(path, "{\"e\": [{\"job\": \"J\", \"queue\": \"" + q
                              + "\"}]}");
  }

  ~fixture() { std::remove(path.c_str()); }
};

} // namespace

CAF_TEST(help names every role and version names the schema) {
  check_help_and_version("outboxd", OUTBOXD_PATH,
                         {"status", "router", "dispatcher", "results", "sweeper"},
                         std::string{OUTBOX_SOURCE_DIR} + "/tools/outboxd/outboxd.8");
}

CAF_TEST_FIXTURE_SCOPE(outboxd_tests, fixture)

CAF_TEST(once runs one pass of each role and exits) {
  publish("e", "{}");
  publish("e", "{}");
  auto [rc, out] = outboxd("--config " + path + " --once");
  CAF_CHECK_EQUAL(rc, 0);
  if (rc != 0)
    CAF_MESSAGE("outboxd --once said:\n" << out);
  CAF_CHECK_EQUAL(count_status("dispatched"), 2); // routed, then published
  auto amqp = amqp_client::connect(amqp_url(), "test");
  CAF_REQUIRE(amqp);
  CAF_REQUIRE(!(*amqp)->consume(q, 10));
  int got = 0;
  while (true) {
    auto m = (*amqp)->next_message(std::chrono::milliseconds{500});
    if (!m || !*m)
      break;
    ++got;
  }
  CAF_CHECK_EQUAL(got, 2);
}

CAF_TEST(bad flags and config exit with a clear message) {
  auto sleep0 = outboxd("--config " + path + " --sleep 0 --once");
  CAF_CHECK_EQUAL(sleep0.first, 2);
  CAF_CHECK_NOT_EQUAL(sleep0.second.find("--sleep: must be an integer number of "
                                         "seconds, 1..3600"),
                      std::string::npos);
  auto sleep_text = outboxd("--config=" + path + " --sleep=soon");
  CAF_CHECK_EQUAL(sleep_text.first, 2);
  CAF_CHECK_NOT_EQUAL(sleep_text.second.find("sleep"), std::string::npos);
  auto role = outboxd("--config " + path + " --roles router,cook");
  CAF_CHECK_EQUAL(role.first, 2);
  CAF_CHECK_NOT_EQUAL(role.second.find("--roles: unknown role \"cook\""),
                      std::string::npos);
  auto queue = outboxd("--config " + path + " --queues nowhere");
  CAF_CHECK_EQUAL(queue.first, 2);
  CAF_CHECK_NOT_EQUAL(queue.second.find("\"nowhere\" is not the queue of any route"),
                      std::string::npos);
  auto extra = outboxd("--config " + path + " now");
  CAF_CHECK_EQUAL(extra.first, 2);
  auto missing = outboxd("--config /nonexistent.json");
  CAF_CHECK_EQUAL(missing.first, 2);
  CAF_CHECK_NOT_EQUAL(missing.second.find("cannot open config file"),
                      std::string::npos);
  auto bad_path = "/tmp/" + queue_prefix + "bad.json";
  {
    std::ofstream out{bad_path};
    out << R"({"batchSize": 0, "routes": {"e": [{"job": "J"}]}})";
  }
  auto bad = outboxd("--config " + bad_path);
  CAF_CHECK_EQUAL(bad.first, 2);
  CAF_CHECK_NOT_EQUAL(bad.second.find("batchSize"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(bad.second.find("queue"), std::string::npos);
  std::remove(bad_path.c_str());
}

CAF_TEST(a status port in use is refused at start) {
  auto port = std::to_string(free_port());
  child_process first{OUTBOXD_PATH,
                      {"--config", path, "--roles", "status", "--listen", port},
                      "/tmp/" + queue_prefix + "first.log"};
  // The first node holds the port once it answers a status query there.
  CAF_REQUIRE(wait_until([&] {
    return run_command(std::string{OUTBOXCTL_PATH}
                       + " status --connect 127.0.0.1:" + port)
             .first
           == 0;
  }));
  auto second = outboxd("--config " + path + " --roles status --listen " + port);
  CAF_CHECK_EQUAL(second.first, 1);
  CAF_CHECK_NOT_EQUAL(second.second.find("cannot listen on 127.0.0.1:" + port),
                      std::string::npos);
  first.signal(SIGTERM);
  CAF_CHECK_EQUAL(first.wait(), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
