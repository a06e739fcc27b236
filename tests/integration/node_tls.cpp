#define CAF_SUITE integration.node_tls
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in{path};
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

struct tls_fixture : cluster_fixture {
  std::string q = queue("tls");
  std::string dir = "/tmp/" + queue_prefix + "tls/";
  std::string config_path = dir + "outbox.json";
  std::string port = std::to_string(free_port());

  tls_fixture() {
    run_command("mkdir -p " + dir);
    write_config_file(config_path, "{\"e\": [{\"job\": \"J\", \"queue\": \""
                                     + q + "\"}]}");
  }

  ~tls_fixture() { run_command("rm -rf " + dir); }

  std::unique_ptr<child_process> start(const std::string& name,
                                       std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path});
    return std::make_unique<child_process>(OUTBOXD_PATH, args,
                                           dir + name + ".log");
  }

  /// `outboxctl status --connect 127.0.0.1:PORT` with `extra` flags.
  std::pair<int, std::string> ctl_status(const std::string& extra = "") {
    return run_command(std::string{OUTBOXCTL_PATH} + " status --json "
                       + extra + " --connect 127.0.0.1:" + port);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(node_tls_tests, tls_fixture)

CAF_TEST(a plain status port off loopback takes --insecure) {
  auto refused = run_command(std::string{OUTBOXD_PATH} + " --config "
                             + config_path + " --roles status --listen 0.0.0.0:"
                             + port);
  check_ends(refused, 2, "is not a loopback address");
  CAF_CHECK_NOT_EQUAL(refused.second.find("--insecure"), std::string::npos);
  auto open = start("insecure", {"--roles", "status", "--listen",
                                 "0.0.0.0:" + port, "--insecure"});
  CAF_REQUIRE(wait_until([&] { return ctl_status().first == 0; }));
  CAF_CHECK(wait_until([&] {
    return read_file(dir + "insecure.log").find("event=insecure_listen")
           != std::string::npos;
  }));
  open->signal(SIGTERM);
  CAF_CHECK_EQUAL(open->wait(), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
