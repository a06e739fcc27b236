#define CAF_SUITE integration.http
#include <caf/test/unit_test.hpp>

#include <atomic>
#include <csignal>
#include <fstream>
#include <sys/resource.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include <httplib.h>
#include <rapidjson/document.h>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/http_node.hpp"
#include "tests/integration/test_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

/// Lets this process hold `n` more descriptors than it does.
void allow_descriptors(rlim_t n) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = std::min(lim.rlim_max, lim.rlim_cur + n);
  setrlimit(RLIMIT_NOFILE, &lim);
}

struct http_fixture : cluster_fixture {
  std::string q = queue("http");
  std::string dir = "/tmp/" + queue_prefix + "http/";
  std::string config_path = dir + "outbox.json";
  std::string status_port = std::to_string(free_port());
  uint16_t http_port = free_port();

  http_fixture() {
    run_command("mkdir -p " + dir);
    write_config_file(config_path, "{\"e\": [{\"job\": \"J\", \"queue\": \"" + q
                                     + "\"}]}");
  }

  ~http_fixture() { run_command("rm -rf " + dir); }

  /// outboxd with every role, its status port and its HTTP endpoint.
  std::unique_ptr<child_process> node(const std::string& config,
                                      std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(), {"--listen", "127.0.0.1:" + status_port});
    return http_node(config, http_port, std::move(extra), dir + "node.log");
  }

  std::pair<int, std::string> get(const std::string& path) {
    return http_get(http_port, path);
  }

  /// The value of the sample `line_start` ("name{labels}") in `text`; -1
  /// when it is not there.
  static double sample(const std::string& text, const std::string& line_start) {
    auto at = text.find("\n" + line_start + " ");
    if (at == std::string::npos)
      return -1;
    return std::stod(text.substr(at + line_start.size() + 2));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_tests, http_fixture)

CAF_TEST(metrics are valid Prometheus text and count what flowed) {
  auto n = node(config_path);
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::completed;
                     }};
  CAF_REQUIRE(wait_until([&] { return get("/readyz").first == 200; }));
  for (int i = 0; i < 30; ++i)
    publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 30; },
                         std::chrono::seconds{20}));
  std::string text;
  auto lc = "outbox_lifecycle_events_total{kind=\"%s\",queue=\"" + q + "\"}";
  auto kind = [&](const std::string& k) {
    auto s = lc;
    return s.replace(s.find("%s"), 2, k);
  };
  // The lifecycle counters and the database counts (cached for a second)
  // catch up with what the database says.
  CAF_CHECK(wait_until([&] {
    text = get("/metrics").second;
    return sample(text, kind("published")) == 30
           && sample(text, kind("completed")) == 30
           && sample(text, "outbox_deliveries{database=\"default\",queue=\"" + q
                             + "\",status=\"completed\"}")
                == 30;
  }));
  CAF_CHECK_GREATER(sample(text, "outbox_actor_rows_total{role=\"dispatcher\","
                                 "queue=\"" + q + "\"}"),
                    29);
  // The histograms count every published delivery and every result.
  CAF_CHECK_EQUAL(sample(text, "outbox_commit_to_published_seconds_count{role="
                               "\"dispatcher\",queue=\"" + q + "\"}"),
                  30);
  CAF_CHECK(wait_until([&] {
    text = get("/metrics").second;
    return sample(text, "outbox_publish_to_result_seconds_count{role="
                        "\"results\",queue=\"" + q + "\"}")
           == 30;
  }));
  CAF_CHECK_EQUAL(sample(text, "outbox_database_up{database=\"default\"}"), 1);
  CAF_CHECK_EQUAL(sample(text, "outbox_nodes{state=\"up\"}"), 1);
  std::ofstream{dir + "metrics.txt"} << text;
  auto checked = run_command("promtool check metrics < " + dir + "metrics.txt");
  CAF_MESSAGE("promtool: " << checked.second);
  CAF_CHECK_EQUAL(checked.first, 0);
  // /api/status is outboxctl status --json.
  auto [code, body] = get("/api/status");
  CAF_CHECK_EQUAL(code, 200);
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  CAF_REQUIRE(!doc.HasParseError() && doc.IsObject());
  CAF_CHECK(doc["database"]["ok"].GetBool());
  CAF_CHECK_EQUAL(doc["nodes"].Size(), 1u);
  CAF_CHECK_EQUAL(get("/healthz").first, 200);
  CAF_CHECK_EQUAL(get("/nothing-here").first, 404);
  n->signal(SIGTERM);
  CAF_CHECK_EQUAL(n->wait(), 0);
}

CAF_TEST(readyz names an unreachable broker while healthz stays up) {
  auto text = read_file(config_path);
  auto at = text.find(amqp_url());
  CAF_REQUIRE(at != std::string::npos);
  text.replace(at, amqp_url().size(),
               "amqp://guest:guest@127.0.0.1:" + std::to_string(free_port()) + "/");
  std::ofstream{dir + "dead-broker.json"} << text;
  auto n = node(dir + "dead-broker.json");
  // The dispatcher and the result handler find the broker gone each on its
  // own connection attempt, so wait for the dispatcher's problem by name.
  std::string body;
  auto dispatcher_problem = "\"dispatcher " + q + ": broker_unavailable";
  CAF_CHECK(wait_until([&] {
    auto r = get("/readyz");
    body = r.second;
    return r.first == 503 && body.find(dispatcher_problem) != std::string::npos;
  }));
  CAF_MESSAGE("readyz: " << body);
  CAF_CHECK_EQUAL(get("/healthz").first, 200);
  n->signal(SIGTERM);
  CAF_CHECK_EQUAL(n->wait(), 0);
}

CAF_TEST(the endpoint refuses plain HTTP off loopback and bad requests) {
  auto refused = run_command(std::string{OUTBOXD_PATH} + " --config " + config_path
                             + " --roles router --http 0.0.0.0:"
                             + std::to_string(http_port));
  check_ends(refused, 2, "is not a loopback address");
  auto n = node(config_path);
  CAF_REQUIRE(wait_until([&] { return get("/healthz").first == 200; }));
  // A second node on the same port is refused, not let in to share it.
  auto taken = run_command(std::string{OUTBOXD_PATH} + " --config " + config_path
                           + " --roles router --http 127.0.0.1:"
                           + std::to_string(http_port));
  check_ends(taken, 2, "--http: cannot listen on 127.0.0.1:");
  // An oversized URI, and a body where none is taken.
  CAF_CHECK_EQUAL(get("/metrics?" + std::string(20000, 'x')).first, 414);
  httplib::Client c{"127.0.0.1", http_port};
  auto posted = c.Post("/metrics", std::string(100000, 'x'), "text/plain");
  CAF_REQUIRE(posted);
  CAF_CHECK_EQUAL(posted->status, 413);
  CAF_CHECK_EQUAL(get("/healthz").first, 200);
  n->signal(SIGTERM);
  CAF_CHECK_EQUAL(n->wait(), 0);
}

// Off loopback the endpoint speaks HTTPS and wants a client certificate of
// the cluster's CA, as the status port does.
CAF_TEST(off loopback the endpoint takes TLS with client certificates) {
  auto certs = dir + "certs";
  auto made = run_command("bash -c 'source " + std::string{OUTBOX_SOURCE_DIR}
                          + "/tools/lib/test_certs.sh && test_ca " + certs
                          + " && test_cert " + certs + " node localhost && test_cert "
                          + certs + " scraper && test_ca " + certs + "/other && test_cert "
                          + certs + "/other stranger'");
  CAF_REQUIRE_EQUAL(made.first, 0);
  auto n = node(config_path, {"--tls-cert", certs + "/node.pem", "--tls-key",
                              certs + "/node.key", "--tls-ca", certs + "/ca.pem"});
  // (node() asks for 127.0.0.1; this one listens on every address.)
  auto open = std::make_unique<child_process>(
    OUTBOXD_PATH,
    std::vector<std::string>{"--config", config_path, "--roles", "router",
                             "--http", "0.0.0.0:" + std::to_string(free_port() + 0),
                             "--tls-cert", certs + "/node.pem", "--tls-key",
                             certs + "/node.key", "--tls-ca", certs + "/ca.pem"},
    dir + "open.log");
  auto https_get = [&](const std::string& who, const std::string& ca_dir) {
    httplib::SSLClient c{"localhost", http_port, ca_dir + "/" + who + ".pem",
                         ca_dir + "/" + who + ".key"};
    c.set_ca_cert_path((certs + "/ca.pem").c_str());
    c.enable_server_certificate_verification(true);
    c.set_connection_timeout(2);
    auto res = c.Get("/healthz");
    return res ? res->status : -1;
  };
  CAF_CHECK(wait_until([&] { return https_get("scraper", certs) == 200; }));
  CAF_CHECK_EQUAL(https_get("stranger", certs + "/other"), -1);
  CAF_CHECK_EQUAL(get("/healthz").first, -1); // plain HTTP gets nothing
  CAF_CHECK(wait_until([&] {
    return read_file(dir + "open.log").find("event=http_listening") != std::string::npos;
  }));
  CAF_CHECK_NOT_EQUAL(read_file(dir + "open.log").find("tls=mutual"), std::string::npos);
  for (auto* p : {open.get(), n.get()}) {
    p->signal(SIGTERM);
    CAF_CHECK_EQUAL(p->wait(), 0);
  }
}

CAF_TEST(a flood of idle connections and a slow client stall neither the endpoint nor the relay) {
  auto n = node(config_path);
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::completed;
                     }};
  CAF_REQUIRE(wait_until([&] { return get("/readyz").first == 200; }));
  allow_descriptors(1100);
  std::vector<int> flood;
  for (int i = 0; i < 1000; ++i)
    if (int fd = open_loopback_connection(http_port); fd >= 0)
      flood.push_back(fd);
  CAF_MESSAGE(flood.size() << " idle connections open");
  CAF_CHECK_EQUAL(flood.size(), 1000u);
  // A slow loris: a request line one byte at a time (its pace is the
  // scenario, not a wait of the test).
  std::atomic<bool> done{false};
  std::thread loris{[&] {
    int fd = open_loopback_connection(http_port);
    std::string line = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: ";
    for (size_t i = 0; !done && fd >= 0; ++i) {
      char c = i < line.size() ? line[i] : 'a';
      if (::send(fd, &c, 1, MSG_NOSIGNAL) != 1)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds{300});
    }
    if (fd >= 0)
      ::close(fd);
  }};
  // Others are answered meanwhile, and the relay moves events on.
  auto asked = std::chrono::steady_clock::now();
  CAF_CHECK(wait_until([&] { return get("/healthz").first == 200; },
                       std::chrono::seconds{10}));
  auto waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked);
  CAF_MESSAGE("answered after " << waited.count() << " s");
  CAF_CHECK_LESS(waited.count(), 5.0);
  for (int i = 0; i < 20; ++i)
    publish("e", "{}");
  CAF_CHECK(wait_until([&] { return count_status("completed") == 20; },
                       std::chrono::seconds{20}));
  CAF_CHECK_EQUAL(get("/metrics").first, 200);
  done = true;
  loris.join();
  for (int fd : flood)
    ::close(fd);
  n->signal(SIGTERM);
  CAF_CHECK_EQUAL(n->wait(), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
