#define CAF_SUITE integration.dashboard
#include <caf/test/unit_test.hpp>

#include <atomic>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <rapidjson/document.h>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "core/pg/migrations.hpp"
#include "tests/integration/headless_chromium.hpp"
#include "tests/integration/http_node.hpp"
#include "tests/integration/test_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// The screenshots are kept for people to look at: the build's artefacts.
const std::string artefacts = OUTBOX_ARTEFACTS_DIR;

struct dashboard_fixture : cluster_fixture {
  std::string q = queue("dash");
  std::string dir = "/tmp/" + queue_prefix + "dashboard";
  std::string config_path = dir + "/outbox.json";
  uint16_t http_port = free_port();
  headless_chromium browser{dir};

  dashboard_fixture() {
    CAF_REQUIRE(headless_chromium::installed());
    run_command("mkdir -p '" + dir + "' '" + artefacts + "'");
    write_config_file(config_path, "{\"e\": [{\"job\": \"J\", \"queue\": \"" + q
                                     + "\"}]}");
  }

  ~dashboard_fixture() { run_command("rm -rf '" + dir + "'"); }

  std::string url(const std::string& path = "/") const {
    return "http://127.0.0.1:" + std::to_string(http_port) + path;
  }

  /// outboxd with `roles`, a status port when it has the status role, and
  /// its HTTP endpoint.
  std::unique_ptr<child_process> node(const std::string& config,
                                      const std::string& roles) {
    std::vector<std::string> args{"--roles", roles};
    if (roles.find("status") != std::string::npos)
      args.insert(args.end(), {"--listen", "127.0.0.1:" + std::to_string(free_port())});
    return http_node(config, http_port, std::move(args), dir + "/node.log");
  }

  httplib::Result get(const std::string& path) {
    httplib::Client c{"127.0.0.1", http_port};
    c.set_connection_timeout(2);
    c.set_read_timeout(5);
    return c.Get(path.c_str());
  }

  /// /api/status parsed; not an object until it answers 200.
  rapidjson::Document status() {
    rapidjson::Document doc;
    auto res = get("/api/status");
    if (!res || res->status != 200 || doc.Parse(res->body.c_str()).HasParseError())
      doc.SetNull();
    return doc;
  }

  /// The names of the nodes in /api/status ({} until it answers).
  std::vector<std::string> node_names() {
    auto doc = status();
    std::vector<std::string> out;
    if (doc.IsObject() && doc.HasMember("nodes"))
      for (auto& n : doc["nodes"].GetArray())
        out.push_back(n["name"].GetString());
    return out;
  }

  /// Whether /api/status counts deliveries of the fixture's queue, `completed`
  /// of them completed (the node reuses its counts for a second: the page
  /// is loaded once they are there).
  bool status_counts(int completed) {
    auto doc = status();
    if (!doc.IsObject() || !doc.HasMember("queues") || !doc["queues"].HasMember(q.c_str()))
      return false;
    return doc["queues"][q.c_str()]["deliveries"]["completed"].GetInt64() == completed;
  }

  /// Loads the page until its DOM holds every one of `texts`.
  std::string dom_with(const std::string& page, std::vector<std::string> texts) {
    std::string dom;
    CAF_CHECK(wait_until(
      [&] {
        dom = browser.dump_dom(page);
        for (auto& t : texts)
          if (dom.find(t) == std::string::npos)
            return false;
        return true;
      },
      std::chrono::seconds{20}));
    return dom;
  }

  void keep_screenshot(const std::string& page, const std::string& name) {
    auto png = artefacts + "/" + name;
    CAF_CHECK(browser.screenshot(page, png));
    CAF_MESSAGE("screenshot: " << png);
  }
};

/// Stands between the browser and the status node: passes the page and the
/// first `answers` reads of /api/status through, then answers 502 as a
/// proxy would whose status node is gone.
struct failing_proxy {
  httplib::Server server;
  std::thread thread;
  std::atomic<int> left;
  uint16_t port = 0;

  failing_proxy(uint16_t upstream, int answers) : left(answers) {
    server.Get(".*", [this, upstream](const httplib::Request& req,
                                      httplib::Response& res) {
      if (req.path == "/api/status" && left-- <= 0) {
        res.status = 502;
        res.set_content("the status node is gone\n", "text/plain");
        return;
      }
      httplib::Client c{"127.0.0.1", upstream};
      auto up = c.Get(req.path.c_str());
      res.status = up ? up->status : 502;
      if (up)
        res.set_content(up->body, up->get_header_value("Content-Type").c_str());
    });
    port = static_cast<uint16_t>(server.bind_to_any_port("127.0.0.1"));
    thread = std::thread{[this] { server.listen_after_bind(); }};
  }

  ~failing_proxy() {
    server.stop();
    thread.join();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(dashboard_tests, dashboard_fixture)

CAF_TEST(the dashboard shows the queues and nodes of a running cluster) {
  auto n = node(config_path, "status,router,dispatcher,results,sweeper");
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::completed;
                     }};
  CAF_REQUIRE(wait_until([&] { return node_names().size() == 1; }));
  for (int i = 0; i < 20; ++i)
    publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return status_counts(20); }));
  // The page and its script, with the headers that keep data out of markup.
  auto page = get("/");
  CAF_REQUIRE(page);
  CAF_CHECK_EQUAL(page->status, 200);
  CAF_CHECK_EQUAL(page->get_header_value("Content-Security-Policy"),
                  "default-src 'self'");
  CAF_CHECK_EQUAL(page->get_header_value("X-Content-Type-Options"), "nosniff");
  CAF_CHECK_NOT_EQUAL(page->body.find("src=\"/dashboard.js\""), std::string::npos);
  auto js = get("/dashboard.js");
  CAF_REQUIRE(js);
  CAF_CHECK_EQUAL(js->get_header_value("Content-Type").rfind("text/javascript", 0), 0u);
  auto name = node_names().at(0);
  auto dom = dom_with(url(), {"data-state=\"ok\"", "data-queue=\"" + q + "\"",
                              "data-node=\"" + name + "\"", ">20<"});
  CAF_CHECK_NOT_EQUAL(dom.find("dispatcher " + q), std::string::npos);
  keep_screenshot(url(), "dashboard.png");
  n->signal(SIGTERM);
  CAF_CHECK_EQUAL(n->wait(), 0);
}

CAF_TEST(a cluster of two databases is shown one database at a time) {
  auto other = schema_names{}.with_prefix(unique_prefix());
  CAF_REQUIRE(migrate(db, other));
  databases = {"alpha", "beta"};
  auto two = dir + "/two.json";
  std::ofstream{two} << "{\"databaseUrl\": \"" << database_url() << "\", \"amqpUrl\": \""
                     << amqp_url() << "\", \"routes\": {\"e\": [{\"job\": \"J\", "
                     << "\"queue\": \"" << q << "\"}]}, \"databases\": {\"alpha\": {"
                     << tables_json(names) << "}, \"beta\": {" << tables_json(other)
                     << "}}}";
  auto n = node(two, "status,router,dispatcher,results,sweeper");
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::completed;
                     }};
  for (int i = 0; i < 7; ++i)
    publish("e", "{}");
  CAF_REQUIRE(wait_until([&] {
    auto doc = status();
    if (!doc.IsObject() || !doc.HasMember("databases"))
      return false;
    auto& alpha = doc["databases"]["alpha"];
    return alpha.HasMember("queues") && alpha["queues"].HasMember(q.c_str())
           && alpha["queues"][q.c_str()]["deliveries"]["completed"].GetInt64() == 7;
  }));
  // The first database by name, with its queue and counts; the picker
  // offers both.
  auto dom = dom_with(url(), {"data-state=\"ok\"", ">alpha<", ">beta<",
                              "data-queue=\"" + q + "\"", ">7<"});
  CAF_CHECK_EQUAL(dom.find("id=\"database-pick\" hidden"), std::string::npos);
  keep_screenshot(url(), "dashboard-two-databases.png");
  n->signal(SIGTERM);
  CAF_CHECK_EQUAL(n->wait(), 0);
  CAF_CHECK(!drop_schema(db, other));
}

CAF_TEST(a status node without its database shows the banner and its nodes) {
  std::ifstream in{config_path};
  std::stringstream text;
  text << in.rdbuf();
  auto conf = text.str();
  auto at = conf.find(database_url());
  CAF_REQUIRE(at != std::string::npos);
  conf.replace(at, database_url().size(),
               "postgresql://postgres@127.0.0.1:" + std::to_string(free_port())
                 + "/postgres");
  std::ofstream{dir + "/no-db.json"} << conf;
  auto n = node(dir + "/no-db.json", "status");
  CAF_REQUIRE(wait_until([&] { return node_names().size() == 1; }));
  auto dom = dom_with(url(), {"data-state=\"database-down\"",
                              "database unavailable: ",
                              "data-node=\"" + node_names().at(0) + "\""});
  CAF_CHECK_EQUAL(dom.find("id=\"banner-database\" class=\"banner bad\" hidden"),
                  std::string::npos);
  keep_screenshot(url(), "dashboard-database-down.png");
  n->signal(SIGTERM);
  CAF_CHECK_EQUAL(n->wait(), 0);
}

CAF_TEST(the last data stays greyed when the status node stops answering) {
  auto n = node(config_path, "status,router,dispatcher,results,sweeper");
  CAF_REQUIRE(wait_until([&] { return node_names().size() == 1; }));
  publish("e", "{}");
  // No worker: the delivery stays open, and its queue in the counts.
  CAF_REQUIRE(wait_until([&] { return status_counts(0); }));
  failing_proxy proxy{http_port, 2};
  auto page = "http://127.0.0.1:" + std::to_string(proxy.port) + "/";
  browser.virtual_ms = 12000;
  auto dom = browser.dump_dom(page);
  auto has = [&](const std::string& t) { return dom.find(t) != std::string::npos; };
  CAF_CHECK(has("data-state=\"unreachable\""));
  CAF_CHECK(has("status node unreachable since"));
  CAF_CHECK(has("data-queue=\"" + q + "\""));
  n->signal(SIGTERM);
  CAF_CHECK_EQUAL(n->wait(), 0);
}

CAF_TEST(a node without the status role has no dashboard) {
  auto n = node(config_path, "sweeper");
  CAF_REQUIRE(wait_until([&] { return static_cast<bool>(get("/healthz")); }));
  for (auto path : {"/", "/dashboard.js"}) {
    auto res = get(path);
    CAF_REQUIRE(res);
    CAF_CHECK_EQUAL(res->status, 404);
    CAF_CHECK_NOT_EQUAL(res->body.find("served by the status node"), std::string::npos);
  }
  n->signal(SIGTERM);
  CAF_CHECK_EQUAL(n->wait(), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
