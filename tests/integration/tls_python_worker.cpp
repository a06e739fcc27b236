// The Python worker (pika) on amqps://: it reads the same cacertfile,
// certfile and keyfile as the C++ side, runs jobs of a node over TLS, and
// a setting that cannot work (an unreadable file) stops it at once with
// our own words, a certificate it does not trust is logged as such.
#define CAF_SUITE integration.tls_python_worker
#include <caf/test/unit_test.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/tls_env.hpp"
#include "tests/integration/wait_until.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Debian's python3-pika lives with /usr/bin/python3.
const std::string python = "/usr/bin/python3";
const std::string worker_script = std::string{OUTBOX_SOURCE_DIR}
                                  + "/clients/python/outbox_worker.py";

struct fixture : tls_required, cluster_fixture {
  std::string dir = tls_dir();
  std::string q = queue("pytls");
  std::string log_path = "/tmp/" + queue_prefix + "python_tls.log";

  ~fixture() { std::remove(log_path.c_str()); }

  std::string base_url() { return amqps_url().substr(0, amqps_url().find('?')); }

  std::unique_ptr<child_process> worker(const std::string& url) {
    return std::make_unique<child_process>(
      python, std::vector<std::string>{worker_script, "--queue", q, "--jobs", "J"},
      log_path, std::vector<std::string>{"OUTBOX_AMQP_URL=" + url});
  }

  std::string log_text() {
    std::ifstream in{log_path};
    return std::string{std::istreambuf_iterator<char>{in}, {}};
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(tls_python_worker_tests, fixture)

CAF_TEST(the python worker completes jobs over amqps with a client certificate) {
  auto url = amqps_url() + "&certfile=" + dir + "/client.pem&keyfile=" + dir
             + "/client.key";
  running_node node{make_config({make_route("e", "J", q, {60})})};
  auto w = worker(url);
  publish("e", R"({"scenario":"ok"})");
  CAF_CHECK(wait_until([&] { return count_status("completed") == 1; }));
  if (count_status("completed") != 1)
    CAF_MESSAGE("worker log: " << log_text());
}

CAF_TEST(an unreadable ca file stops the python worker with its path) {
  auto [status, output] = run_command("env OUTBOX_AMQP_URL='" + base_url()
                                      + "?cacertfile=/nonexistent/ca.pem' " + python
                                      + " " + worker_script + " --queue " + q);
  CAF_CHECK_EQUAL(status, 2);
  CAF_CHECK_NOT_EQUAL(output.find("cannot read the CA file (cacertfile) "
                                  "/nonexistent/ca.pem"),
                      std::string::npos);
  CAF_CHECK_EQUAL(output.find("guest:guest"), std::string::npos);
}

CAF_TEST(an untrusted broker certificate is logged as such and retried) {
  auto w = worker(base_url() + "?cacertfile=" + dir + "/other/ca.pem");
  CAF_CHECK(wait_until([&] {
    return log_text().find("tls=certificate_not_trusted") != std::string::npos;
  }));
  auto text = log_text();
  CAF_CHECK_EQUAL(text.find("Traceback"), std::string::npos);
  CAF_CHECK_EQUAL(text.find("CERTIFICATE_VERIFY_FAILED"), std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
