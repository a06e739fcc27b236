#define CAF_SUITE integration.prometheus
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <fstream>
#include <map>

#include <rapidjson/document.h>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/http_node.hpp"
#include "tests/integration/test_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

// Debian's Prometheus scraping two outboxd nodes as docs/operations.md
// "Monitoring" has it: what it stores must be what the database says.

namespace {

using series = std::map<std::string, double>; // a label's value -> sample

struct prometheus_fixture : cluster_fixture {
  std::string jobs = queue("jobs");
  std::string mail = queue("mail");
  std::string dir = "/tmp/" + queue_prefix + "prometheus/";
  std::string config_path = dir + "outbox.json";
  std::string status_port = std::to_string(free_port());
  uint16_t status_http = free_port(), dispatch_http = free_port();
  uint16_t prom_port = free_port();

  prometheus_fixture() {
    run_command("mkdir -p " + dir);
    // Two queues, so that the counts are told apart by queue: one worker
    // completes its jobs, the other fails them (for good: no retries).
    write_config_file(config_path,
                      "{\"e\": [{\"job\": \"J\", \"queue\": \"" + jobs
                        + "\"}, {\"job\": \"K\", \"queue\": \"" + mail
                        + "\", \"retryDelaysSeconds\": []}]}");
  }

  ~prometheus_fixture() { run_command("rm -rf " + dir); }

  std::unique_ptr<child_process> outboxd(const std::string& name, uint16_t http,
                                         std::vector<std::string> args) {
    return http_node(config_path, http, std::move(args), dir + name + ".log");
  }

  /// A scrape config of two jobs, one node each, scraped every second.
  void write_prometheus_config() {
    auto job = [](const std::string& name, uint16_t port) {
      return "  - job_name: " + name + "\n    static_configs:\n"
             + "      - targets: ['127.0.0.1:" + std::to_string(port) + "']\n";
    };
    std::ofstream{dir + "prometheus.yml"}
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      << "scrape_configs:\n"
      << job("outbox_status", status_http) << job("outbox_dispatch", dispatch_http);
  }

  std::unique_ptr<child_process> prometheus() {
    write_prometheus_config();
    return std::make_unique<child_process>(
      "/usr/bin/prometheus",
      std::vector<std::string>{"--config.file=" + dir + "prometheus.yml",
                               "--storage.tsdb.path=" + dir + "data",
                               "--web.listen-address=127.0.0.1:"
                                 + std::to_string(prom_port),
                               "--log.level=warn"},
      dir + "prometheus.log");
  }

  bool prometheus_ready() { return http_get(prom_port, "/-/ready").first == 200; }

  /// An instant query's samples by the value of `label`; empty when
  /// Prometheus did not answer or had nothing.
  series query(const std::string& expr, const std::string& label) {
    series out;
    auto [code, body] = http_get(prom_port, "/api/v1/query", {{"query", expr}});
    if (code != 200)
      return out;
    rapidjson::Document doc;
    doc.Parse(body.c_str());
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("data"))
      return out;
    for (auto& r : doc["data"]["result"].GetArray()) {
      auto& m = r["metric"];
      std::string key = m.HasMember(label.c_str()) ? m[label.c_str()].GetString()
                                                    : "";
      out[key] = std::stod(r["value"][1].GetString());
    }
    return out;
  }

  /// The database's count of `queue`'s deliveries by status.
  series counts_of(const std::string& q) {
    auto rows = must_exec(db, "SELECT status, count(*) FROM " + all_deliveries(names)
                                + " d WHERE queue = $1 GROUP BY status", {q});
    series out;
    for (int i = 0; i < rows.size(); ++i)
      out[rows.text(i, 0)] = static_cast<double>(rows.int64(i, 1));
    return out;
  }

  /// What Prometheus holds of outbox_deliveries for `queue`, by status.
  series scraped_counts_of(const std::string& q) {
    return query("outbox_deliveries{queue=\"" + q + "\"}", "status");
  }

  /// Whether Prometheus holds the database's counts of `queue`: the same
  /// non-zero counts (the node reports every status, zeros included).
  bool scraped_matches(const std::string& q, const series& want) {
    auto got = scraped_counts_of(q);
    if (got.empty())
      return false;
    for (auto& [status, n] : got)
      if (n != (want.count(status) ? want.at(status) : 0.0))
        return false;
    for (auto& [status, n] : want)
      if (!got.count(status))
        return false;
    return true;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(prometheus_tests, prometheus_fixture)

CAF_TEST(a Prometheus server scrapes two nodes and stores the database counts) {
  CAF_MESSAGE("logs in " << dir);
  auto status = outboxd("status", status_http,
                        {"--roles", "status,router,sweeper", "--listen",
                         "127.0.0.1:" + status_port});
  auto dispatch = outboxd("dispatch", dispatch_http,
                          {"--roles", "dispatcher,results", "--join",
                           "127.0.0.1:" + status_port});
  auto prom = prometheus();
  test_worker completes{amqp_url(), jobs, [](const job_seen&, int) {
                          return answer::completed;
                        }};
  test_worker fails{amqp_url(), mail, [](const job_seen&, int) {
                      return answer::failed;
                    }};
  CAF_REQUIRE(wait_until([&] { return prometheus_ready(); }));
  // Both targets up: each node answers its scrapes.
  CAF_CHECK(wait_until([&] {
    auto up = query("up", "job");
    return up["outbox_status"] == 1 && up["outbox_dispatch"] == 1;
  }));
  for (int i = 0; i < 20; ++i)
    publish("e", "{}");
  CAF_REQUIRE(wait_until([&] {
    return count_status("completed") == 20 && count_status("failed") == 20;
  }));
  // The counts reach Prometheus a scrape (and the status node's one-second
  // cache) later.
  series want_jobs = counts_of(jobs), want_mail = counts_of(mail);
  CAF_CHECK(wait_until([&] {
    return scraped_matches(jobs, want_jobs) && scraped_matches(mail, want_mail);
  }));
  auto got_jobs = scraped_counts_of(jobs), got_mail = scraped_counts_of(mail);
  CAF_CHECK_EQUAL(got_jobs["completed"], 20);
  CAF_CHECK_EQUAL(got_mail["failed"], 20);
  // The dispatcher node's own series came from its target.
  auto rows = query("outbox_actor_rows_total{role=\"dispatcher\"}", "job");
  CAF_CHECK_EQUAL(rows.size(), 1u);
  CAF_CHECK(rows.count("outbox_dispatch") == 1);
  prom->signal(SIGTERM);
  CAF_CHECK_EQUAL(prom->wait(), 0);
  for (auto* p : {dispatch.get(), status.get()})
    p->signal(SIGTERM);
  CAF_CHECK_EQUAL(dispatch->wait(), 0);
  CAF_CHECK_EQUAL(status->wait(), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
