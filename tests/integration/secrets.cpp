#define CAF_SUITE integration.secrets
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Passwords that appear nowhere else, so that finding one proves a leak.
// The test database trusts loopback and ignores the one in its URL; the
// broker refuses the other, which sends it down the error paths, where
// a URL is most likely to be quoted.
const std::string db_secret = "pgSecret8c1f";
const std::string amqp_secret = "amqpSecret5d2e";

/// What `ps` shows as the process's title (its command line).
std::string process_title(pid_t pid) {
  std::string s = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  for (auto& c : s)
    if (c == '\0')
      c = ' ';
  return s;
}

struct secrets_fixture : cluster_fixture {
  std::string q = queue("secrets");
  std::string dir = "/tmp/" + queue_prefix + "secrets/";
  std::string port = std::to_string(free_port());

  secrets_fixture() {
    run_command("mkdir -p " + dir);
  }

  ~secrets_fixture() { run_command("rm -rf " + dir); }

  /// database_url() with a password it does not need.
  std::string db_url_with_secret() {
    return database_url() + " password=" + db_secret;
  }

  /// The test broker's URL with a password it refuses.
  std::string amqp_url_with_secret() {
    auto at = amqp_url().find('@');
    return "amqp://guest:" + amqp_secret + amqp_url().substr(at);
  }

  /// A config file with both secret-carrying URLs inline; returns its path.
  std::string inline_config() {
    auto path = write_config_file(dir + "inline.json",
                                  "{\"e\": [{\"job\": \"J\", \"queue\": \"" + q
                                    + "\"}]}");
    auto text = read_file(path);
    replace(text, database_url(), db_url_with_secret());
    replace(text, amqp_url(), amqp_url_with_secret());
    std::ofstream{path} << text;
    return path;
  }

  static void replace(std::string& text, const std::string& from,
                      const std::string& to) {
    auto at = text.find(from);
    CAF_REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }

  void check_clean(const std::string& what, const std::string& text) {
    CAF_MESSAGE("checking " << what << " (" << text.size() << " bytes)");
    CAF_CHECK_EQUAL(text.find(db_secret), std::string::npos);
    CAF_CHECK_EQUAL(text.find(amqp_secret), std::string::npos);
  }

  /// Whether the node's log says it failed to reach the broker (proof that
  /// the error path ran).
  bool broker_refused(const std::string& log) {
    return read_file(log).find("refused the login") != std::string::npos;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(secrets_tests, secrets_fixture)

CAF_TEST(no password shows in logs errors outboxctl output or ps) {
  auto config = inline_config();
  auto log = dir + "node.log";
  child_process node{OUTBOXD_PATH,
                     {"--config", config, "--roles",
                      "status,router,sweeper,dispatcher,results", "--listen",
                      "127.0.0.1:" + port, "--sleep", "1"},
                     log};
  publish("e", "{}");
  // The router works (the database URL is good) while every broker session
  // is refused (the AMQP password is wrong), and says so.
  CAF_REQUIRE(wait_until([&] { return count_status("pending") == 1; }));
  CAF_REQUIRE(wait_until([&] { return broker_refused(log); }));
  check_clean("outboxd's process title", process_title(node.pid()));
  auto ctl = std::string{OUTBOXCTL_PATH} + " status ";
  check_clean("outboxctl status", run_command(ctl + "--connect 127.0.0.1:" + port).second);
  check_clean("outboxctl status --json",
              run_command(ctl + "--json --connect 127.0.0.1:" + port).second);
  check_clean("outboxctl status --db", run_command(ctl + "--db --config " + config).second);
  // A database that refuses: libpq's message may quote the URL's parts.
  auto unreachable = read_file(config);
  replace(unreachable, std::string{"port="} + std::getenv("OUTBOX_TEST_DB_PORT"),
          "port=1");
  std::ofstream{dir + "unreachable.json"} << unreachable;
  auto refused = run_command(ctl + "--db --config " + dir + "unreachable.json");
  CAF_CHECK_NOT_EQUAL(refused.first, 0);
  check_clean("outboxctl's database error", refused.second);
  node.signal(SIGTERM);
  CAF_CHECK_EQUAL(node.wait(), 0);
  check_clean("outboxd's log", read_file(log));
}

CAF_TEST(no password shows when the URLs come from the environment) {
  auto config = write_config_file(dir + "plain.json",
                                  "{\"e\": [{\"job\": \"J\", \"queue\": \"" + q
                                    + "\"}]}");
  auto log = dir + "env.log";
  child_process node{OUTBOXD_PATH,
                     {"--config", config, "--roles", "router,dispatcher",
                      "--queues", q, "--sleep", "1"},
                     log,
                     {"OUTBOX_DATABASE_URL=" + db_url_with_secret(),
                      "OUTBOX_AMQP_URL=" + amqp_url_with_secret()}};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("pending") == 1; }));
  CAF_REQUIRE(wait_until([&] { return broker_refused(log); }));
  check_clean("outboxd's process title", process_title(node.pid()));
  node.signal(SIGTERM);
  CAF_CHECK_EQUAL(node.wait(), 0);
  check_clean("outboxd's log", read_file(log));
}

CAF_TEST_FIXTURE_SCOPE_END()
