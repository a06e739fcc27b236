#define CAF_SUITE faults.many_databases
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <rapidjson/document.h>

#include "core/pg/migrations.hpp"
#include "tests/faults/private_services.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/test_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// A cluster of three databases (three outboxes in the test database, each
// on tables of its own) and three outboxd nodes that route and sweep,
// beside a status node and a node of dispatchers and result handlers.
struct fixture : cluster_fixture {
  std::vector<std::string> dbs{"da", "db", "dc"};
  std::map<std::string, schema_names> tables;
  std::string jobs = queue("jobs");
  std::string dir = "/tmp/" + queue_prefix + "many_databases/";
  std::string config_path = dir + "outbox.json";
  std::string status_port = std::to_string(free_port());
  std::unique_ptr<child_process> status_node, work_node;
  std::vector<std::unique_ptr<child_process>> leaders;

  fixture() {
    std::string cmd = "mkdir -p " + dir;
    CAF_REQUIRE_EQUAL(std::system(cmd.c_str()), 0);
    databases = dbs;
    tables["da"] = names; // the fixture's own
    for (auto db : {"db", "dc"}) {
      tables[db] = schema_names{}.with_prefix(unique_prefix());
      if (auto ran = migrate(this->db, tables[db]); !ran)
        CAF_FAIL("migration failed: " << render(ran.error()));
    }
    std::ofstream out{config_path};
    out << "{\"databaseUrl\": \"" << database_url() << "\", \"amqpUrl\": \""
        << amqp_url() << "\", \"routes\": {\"e\": [{\"job\": \"J\", \"queue\": \""
        << jobs << "\", \"deliveryTimeoutSeconds\": 20}]}, \"databases\": {";
    for (size_t i = 0; i < dbs.size(); ++i) {
      out << (i ? ", " : "") << "\"" << dbs[i] << "\": {"
          << tables_json(tables[dbs[i]]) << "}";
    }
    out << "}}";
  }

  ~fixture() {
    leaders.clear();
    work_node.reset();
    status_node.reset();
    for (auto db : {"db", "dc"})
      if (auto err = drop_schema(this->db, tables[db]))
        CAF_FAIL("dropping a schema failed: " << render(err));
    std::string cmd = "rm -rf " + dir;
    [[maybe_unused]] auto rc = std::system(cmd.c_str());
  }

  std::unique_ptr<child_process> start(const std::string& name,
                                       std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path});
    return std::make_unique<child_process>(OUTBOXD_PATH, args, dir + name + ".log");
  }

  void start_cluster() {
    status_node = start("status", {"--roles", "status", "--listen",
                                   "127.0.0.1:" + status_port});
    for (int i = 0; i < 3; ++i)
      leaders.push_back(start("leader" + std::to_string(i),
                              {"--roles", "router,sweeper", "--join",
                               "127.0.0.1:" + status_port}));
    work_node = start("work", {"--roles", "dispatcher,results", "--join",
                               "127.0.0.1:" + status_port});
  }

  void publish_to(const std::string& db, int n) {
    for (int i = 0; i < n; ++i)
      must_exec(this->db, "SELECT " + tables[db].publish_function + "('e', '{}', NULL)");
  }

  int64_t count_in(const std::string& db, const std::string& status) {
    return must_exec(this->db, "SELECT count(*) FROM " + all_deliveries(tables[db])
                                 + " d WHERE status = $1",
                     {status})
      .int64(0, 0);
  }

  // database -> the node leading its routing, as `outboxctl status --json`
  // shows it; and the nodes up.
  std::map<std::string, std::string> router_leaders(std::set<std::string>& up) {
    std::map<std::string, std::string> out;
    auto [rc, text] = run_command(std::string{OUTBOXCTL_PATH}
                                  + " status --json --connect 127.0.0.1:"
                                  + status_port);
    rapidjson::Document doc;
    if (rc != 0 || doc.Parse(text.c_str()).HasParseError() || !doc.IsObject()
        || !doc.HasMember("databases") || !doc["databases"].IsObject())
      return out;
    for (auto& m : doc["databases"].GetObject()) {
      auto& v = m.value;
      if (v.IsObject() && v.HasMember("leaders") && v["leaders"].HasMember("router"))
        out[m.name.GetString()] = v["leaders"]["router"].GetString();
    }
    if (doc.HasMember("nodes") && doc["nodes"].IsArray())
      for (auto& n : doc["nodes"].GetArray())
        if (n["up"].GetBool())
          up.insert(n["name"].GetString());
    return out;
  }

  // Each database's retention is done where its sweeping leads: the
  // leader's retention actor took the retention lock (which the others
  // let go of, or never took), and no other node's retention leads it.
  bool retention_follows_sweepers() {
    auto [rc, text] = run_command(std::string{OUTBOXCTL_PATH}
                                  + " status --json --connect 127.0.0.1:"
                                  + status_port);
    rapidjson::Document doc;
    if (rc != 0 || doc.Parse(text.c_str()).HasParseError() || !doc.IsObject()
        || !doc.HasMember("databases") || !doc.HasMember("nodes"))
      return false;
    for (auto& db : dbs) {
      auto& d = doc["databases"][db.c_str()];
      if (!d.HasMember("leaders") || !d["leaders"].HasMember("sweeper"))
        return false;
      std::string leader = d["leaders"]["sweeper"].GetString();
      auto actor = "retention@" + db;
      for (auto& n : doc["nodes"].GetArray())
        for (auto& a : n["actors"].GetArray()) {
          if (a["name"].GetString() != actor)
            continue;
          bool took = a["counters"].HasMember("took_lead");
          bool leads = a["gauges"].HasMember("leader")
                       && a["gauges"]["leader"].GetInt64() == 1;
          if (n["name"].GetString() == leader ? !(took && leads) : leads)
            return false;
        }
    }
    return true;
  }

  // The leader node whose name (host:pid) ends with the child's pid.
  size_t index_of(const std::string& node) {
    for (size_t i = 0; i < leaders.size(); ++i) {
      auto suffix = ":" + std::to_string(leaders[i]->pid());
      if (node.size() > suffix.size()
          && node.compare(node.size() - suffix.size(), suffix.size(), suffix) == 0)
        return i;
    }
    return leaders.size();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(many_databases_faults, fixture)

CAF_TEST(kill -9 of the node leading a database moves its lead and loses nothing) {
  start_cluster();
  test_worker worker{amqp_url(), jobs, [](const job_seen&, int) {
                       return answer::completed;
                     }};
  // The three leaders share the three databases: one each.
  std::map<std::string, std::string> lead;
  CAF_REQUIRE(wait_until([&] {
    std::set<std::string> up;
    lead = router_leaders(up);
    std::set<std::string> nodes;
    for (auto& [db, node] : lead)
      nodes.insert(node);
    return lead.size() == 3 && nodes.size() == 3;
  }, std::chrono::seconds{60}));
  CAF_CHECK(wait_until([&] { return retention_follows_sweepers(); },
                       std::chrono::seconds{60}));
  for (auto& db : dbs)
    publish_to(db, 30);
  CAF_REQUIRE(wait_until([&] {
    for (auto& db : dbs)
      if (count_in(db, "completed") < 30)
        return false;
    return true;
  }, std::chrono::seconds{60}));
  // Kill the leader of db's routing; its events keep coming.
  auto victim = index_of(lead.at("db"));
  CAF_REQUIRE_LESS(victim, leaders.size());
  auto dead = lead.at("db");
  leaders[victim]->signal(SIGKILL);
  leaders[victim]->wait();
  for (auto& db : dbs)
    publish_to(db, 30);
  // Another live node takes db's lead (the status node saw the death).
  CAF_REQUIRE(wait_until([&] {
    std::set<std::string> up;
    auto now = router_leaders(up);
    return now.count("db") && now["db"] != dead && up.count(now["db"])
           && up.count(dead) == 0;
  }, std::chrono::seconds{60}));
  // Every event of every database is delivered, none lost.
  CAF_REQUIRE(wait_until([&] {
    for (auto& db : dbs)
      if (count_in(db, "completed") < 60)
        return false;
    return true;
  }, std::chrono::seconds{120}));
  for (auto& db : dbs) {
    CAF_CHECK_EQUAL(count_in(db, "completed"), 60);
    CAF_CHECK_EQUAL(count_in(db, "pending") + count_in(db, "dispatched"), 0);
  }
  // Delivery ids repeat across the databases: each lifecycle line of the
  // work node (its dispatchers' and its result handler's) says whose it is.
  std::istringstream log{read_file(dir + "work.log")};
  std::map<std::string, int> published, completed;
  int unnamed = 0;
  for (std::string line; std::getline(log, line);) {
    bool pub = line.find("event=published ") != std::string::npos;
    bool done = line.find("event=delivery_completed ") != std::string::npos;
    if (!pub && !done)
      continue;
    auto at = line.rfind(" database=");
    if (at == std::string::npos) {
      ++unnamed;
      continue;
    }
    ++(pub ? published : completed)[line.substr(at + 10)];
  }
  CAF_CHECK_EQUAL(unnamed, 0);
  for (auto& db : dbs) {
    CAF_CHECK_GREATER_OR_EQUAL(published[db], 60);
    CAF_CHECK_GREATER_OR_EQUAL(completed[db], 60);
  }
}

CAF_TEST_FIXTURE_SCOPE_END()

namespace {

// Two databases on the shared test server and one on a server of its own,
// which the scenario stops; each database routes to a queue of its own.
struct outage_fixture : cluster_fixture {
  std::string shared_url = database_url(); // before the private servers
  private_services own;                    // points the variables at them
  std::string own_url = database_url();
  schema_names b_names = schema_names{}.with_prefix(unique_prefix());
  schema_names x_names;
  std::map<std::string, std::string> queues{{"a", queue("qa")},
                                            {"b", queue("qb")},
                                            {"x", queue("qx")}};

  outage_fixture() {
    CAF_REQUIRE(migrate(db, b_names));
    auto x = pg_connection::connect(own_url);
    CAF_REQUIRE(x);
    CAF_REQUIRE(migrate(*x, x_names));
  }

  ~outage_fixture() {
    if (auto err = drop_schema(db, b_names))
      CAF_FAIL("dropping a schema failed: " << render(err));
  }

  cluster_config config() {
    auto entry = [&](const std::string& name, const std::string& url,
                     const schema_names& n) {
      return "\"" + name + "\": {\"databaseUrl\": \"" + url + "\", " + tables_json(n)
             + ", \"routes\": {\"e\": [{\"job\": \"J\", \"queue\": \""
             + queues[name] + "\"}]}}";
    };
    auto json = "{\"amqpUrl\": \"" + amqp_url() + "\", \"databases\": {"
                + entry("a", shared_url, names) + ", " + entry("b", shared_url, b_names)
                + ", " + entry("x", own_url, x_names) + "}}";
    auto all = parse_cluster_config(json, [](const char*) { return std::string{}; });
    if (!all)
      CAF_FAIL("config refused: " << render(all.error()));
    return *all;
  }

  int64_t completed_in(const schema_names& n) {
    return must_exec(db, "SELECT count(*) FROM " + n.deliveries + "_completed").int64(0, 0);
  }

  void publish_in(const schema_names& n, int count) {
    for (int i = 0; i < count; ++i)
      must_exec(db, "SELECT " + n.publish_function + "('e', '{}', NULL)");
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(many_databases_outage, outage_fixture)

CAF_TEST(a database whose server is down leaves the other databases working) {
  running_node node{config()};
  std::vector<std::unique_ptr<test_worker>> workers;
  for (auto& [db, q] : queues)
    workers.push_back(std::make_unique<test_worker>(
      amqp_url(), q, [](const job_seen&, int) { return answer::completed; }));
  // x works before its server stops.
  auto x = pg_connection::connect(own_url);
  CAF_REQUIRE(x);
  must_exec(*x, "SELECT " + x_names.publish_function + "('e', '{}', NULL)");
  CAF_REQUIRE(wait_until([&] {
    return must_exec(*x, "SELECT count(*) FROM " + x_names.deliveries + "_completed")
             .int64(0, 0)
           == 1;
  }));
  own.stop_database();
  // Down as the status node sees it.
  CAF_REQUIRE(wait_until([&] {
    for (auto& d : node.status().databases)
      if (d.name == "x")
        return !d.ok;
    return false;
  }, std::chrono::seconds{60}));
  // a and b go on: every event written while x is down completes.
  publish_in(names, 200);
  publish_in(b_names, 200);
  CAF_CHECK(wait_until([&] {
    return completed_in(names) == 200 && completed_in(b_names) == 200;
  }, std::chrono::seconds{60}));
  // x is still down (its actors failed their passes all along), and when
  // its server is back it goes on too.
  bool x_down = false;
  for (auto& d : node.status().databases)
    if (d.name == "x")
      x_down = !d.ok;
  CAF_CHECK(x_down);
  own.start_database();
  auto back = pg_connection::connect(own_url);
  CAF_REQUIRE(back);
  must_exec(*back, "SELECT " + x_names.publish_function + "('e', '{}', NULL)");
  CAF_CHECK(wait_until([&] {
    return must_exec(*back, "SELECT count(*) FROM " + x_names.deliveries + "_completed")
             .int64(0, 0)
           == 2;
  }, std::chrono::seconds{60}));
}

CAF_TEST_FIXTURE_SCOPE_END()
