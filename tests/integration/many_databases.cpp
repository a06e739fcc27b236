#define CAF_SUITE integration.many_databases
#include <caf/test/unit_test.hpp>

#include <set>
#include <sstream>

#include "core/amqp/amqp_endpoints.hpp"
#include "core/amqp/wire.hpp"
#include "core/domain/dispatch_tag.hpp"
#include "core/pg/migrations.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/test_worker.hpp"
#include "tests/support/silent_server.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Two outboxes in the test database, each as a database of one config:
// `orders` on the fixture's tables, `billing` on tables of its own. Both
// route to a shared queue; orders also to a queue of its own.
struct fixture : cluster_fixture {
  schema_names billing_names = schema_names{}.with_prefix(unique_prefix());
  std::string shared = queue("shared");
  std::string own = queue("own");

  fixture() {
    databases = {"orders", "billing"};
    if (auto ran = migrate(db, billing_names); !ran)
      CAF_FAIL("migration failed: " << render(ran.error()));
  }

  ~fixture() {
    if (auto err = drop_schema(db, billing_names))
      CAF_FAIL("dropping the billing schema failed: " << render(err));
  }

  // Read through the config parser, as outboxd reads it.
  cluster_config two_databases() {
    std::ostringstream json;
    json << "{\"databaseUrl\": \"" << database_url() << "\", \"amqpUrl\": \""
         << amqp_url() << "\", \"databases\": {"
         << "\"orders\": {" << tables_json(names) << ", \"routes\": {\"e\": ["
         << "{\"job\": \"Mail\", \"queue\": \"" << shared << "\"},"
         << "{\"job\": \"Pack\", \"queue\": \"" << own << "\"}]}},"
         << "\"billing\": {" << tables_json(billing_names) << ", \"routes\": {\"e\": ["
         << "{\"job\": \"Mail\", \"queue\": \"" << shared << "\"}]}}}}";
    auto all = parse_cluster_config(json.str(), [](const char*) {
      return std::string{};
    });
    if (!all)
      CAF_FAIL("config refused: " << render(all.error()));
    return *all;
  }

  int64_t billing_publish() {
    return must_exec(db, "SELECT " + billing_names.publish_function
                           + "('e', '{}', NULL)")
      .int64(0, 0);
  }

  // Publishes n events to each database (each goes to the shared queue
  // and to orders' own one) and waits until every delivery completed.
  void publish_to_both_until_completed(int n) {
    for (int i = 0; i < n; ++i) {
      publish("e", "{}");
      billing_publish();
    }
    CAF_REQUIRE(wait_until([&] {
      return count_status("completed") == 2 * n && billing_completed() == n;
    }));
    CAF_CHECK_EQUAL(open_deliveries(), 0);
  }

  static answer completes(const job_seen&, int) { return answer::completed; }

  int64_t billing_completed() {
    return must_exec(db, "SELECT count(*) FROM " + all_deliveries(billing_names)
                           + " d WHERE status = 'completed'")
      .int64(0, 0);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(many_databases_tests, fixture)

CAF_TEST(one node serves two databases and a shared queue completes both) {
  auto all = two_databases();
  running_node node{all};
  test_worker mail{amqp_url(), shared, completes};
  test_worker pack{amqp_url(), own, completes};
  constexpr int n = 20;
  publish_to_both_until_completed(n);
  // Each database's sends carry its name and start with its tag; the
  // delivery ids of the two databases overlap (each has its own sequence).
  auto jobs = mail.seen();
  CAF_CHECK_EQUAL(jobs.size(), size_t{2 * n});
  std::map<std::string, std::set<int64_t>> ids;
  for (auto& j : jobs) {
    auto db = j.headers[database_header];
    CAF_CHECK(db == "orders" || db == "billing");
    CAF_CHECK_EQUAL(tag_in(j.dispatch_id), dispatch_tag_of(db));
    ids[db].insert(j.delivery_id);
  }
  std::vector<int64_t> both;
  std::set_intersection(ids["orders"].begin(), ids["orders"].end(),
                        ids["billing"].begin(), ids["billing"].end(),
                        std::back_inserter(both));
  CAF_CHECK(!both.empty());
  // The status node shows each database's counts.
  auto s = node.status();
  CAF_REQUIRE_EQUAL(s.databases.size(), 2u);
  CAF_CHECK_EQUAL(s.databases[0].name, "billing");
  CAF_CHECK(s.databases[0].ok);
  CAF_CHECK_EQUAL(s.databases[0].counts.per_queue.at(shared).per_status.at("completed"),
                  n);
  CAF_CHECK_EQUAL(s.databases[1].name, "orders");
  CAF_CHECK_EQUAL(s.databases[1].counts.per_queue.at(own).per_status.at("completed"),
                  n);
  // And the node's connections as the database counts them, within the
  // documented bound: 5 + 3 x Q per database it serves and one of the
  // status node's. Both outboxes live in one database here, so each
  // shows the sum of both (read a moment apart).
  auto name = s.nodes.at(0).name;
  auto held = s.databases[1].counts.connections[name];
  CAF_CHECK_GREATER(held, 0);
  CAF_CHECK_LESS_OR_EQUAL(held, (5 + 3 * 2) + (5 + 3 * 1) + 2);
  CAF_CHECK_GREATER(s.databases[0].counts.connections[name], 0);
  // Each database has its own router, and the shared queue one handler.
  std::set<std::string> names;
  CAF_REQUIRE_EQUAL(s.nodes.size(), 1u);
  for (auto& a : s.nodes[0].actors)
    names.insert(a.metrics.name);
  for (auto name : {std::string{"router@orders"}, std::string{"router@billing"},
                    "dispatcher " + shared + "@orders",
                    "dispatcher " + shared + "@billing", "results " + shared,
                    "dispatcher " + own + "@orders"})
    CAF_CHECK_EQUAL(names.count(name), 1u);
  CAF_CHECK_EQUAL(names.count("dispatcher " + own + "@billing"), 0u);
  // Their metrics reach the view under those names, with their database.
  CAF_CHECK(wait_until([&] {
    auto now = node.status();
    for (auto& a : now.nodes.at(0).actors)
      if (a.metrics.name == "router@billing" && a.metrics.rows == n)
        return a.metrics.database == "billing";
    return false;
  }));
}

CAF_TEST(a database that cannot be reached leaves the other one working) {
  auto all = two_databases();
  // billing's URL names a server that is not there: its actors fail and
  // retry on their own, orders goes on.
  for (auto& cfg : all.databases)
    if (cfg.database == "billing")
      cfg.database_url = "postgresql://nobody@127.0.0.1:1/none?connect_timeout=1";
  running_node node{all};
  test_worker mail{amqp_url(), shared, completes};
  test_worker pack{amqp_url(), own, completes};
  for (int i = 0; i < 10; ++i)
    publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 20; }));
  auto s = node.status();
  CAF_REQUIRE_EQUAL(s.databases.size(), 2u);
  CAF_CHECK(!s.databases[0].ok);
  CAF_CHECK(s.databases[1].ok);
}

CAF_TEST(a database host that never answers holds up neither the status nor the other) {
  silent_server silent;
  CAF_REQUIRE_NOT_EQUAL(silent.port(), 0);
  auto all = two_databases();
  // billing's host takes connections and says nothing: each connect of its
  // actors and of its counts reader waits out the timeout, longer than a
  // status request waits (5 s).
  for (auto& cfg : all.databases)
    if (cfg.database == "billing")
      cfg.database_url = "postgresql://nobody@127.0.0.1:" + std::to_string(silent.port())
                         + "/none?connect_timeout=8";
  running_node node{all};
  test_worker mail{amqp_url(), shared, completes};
  test_worker pack{amqp_url(), own, completes};
  for (int i = 0; i < 10; ++i)
    publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 20; }));
  // The answer comes while billing's read hangs: orders' counts, and
  // billing's reason.
  auto s = node.status();
  CAF_REQUIRE_EQUAL(s.databases.size(), 2u);
  CAF_CHECK_EQUAL(s.databases[0].name, "billing");
  CAF_CHECK(!s.databases[0].ok);
  CAF_CHECK_NOT_EQUAL(s.databases[0].error.find("slow or unreachable"),
                      std::string::npos);
  CAF_CHECK(s.databases[1].ok);
  CAF_CHECK_EQUAL(s.databases[1].counts.per_status["completed"], 20);
  // And so do the leaders, which every node's agent asks for each 500 ms
  // with 2 s to answer.
  auto hdl = node.sys->middleman().remote_actor<status_actor>("127.0.0.1",
                                                             node.n->status_port());
  CAF_REQUIRE(hdl);
  caf::scoped_actor self{*node.sys};
  bool answered = false;
  self->request(*hdl, std::chrono::seconds{2}, leaders_atom::value)
    .receive([&](leader_map& m) { answered = m.count("orders") == 1; },
             [&](caf::error&) {});
  CAF_CHECK(answered);
}

CAF_TEST(two nodes each serving one database share a queue and lose no result) {
  auto all = two_databases();
  // Each node's result handler takes results of both databases off the
  // shared results queue: the other database's it parks for the node
  // that serves it.
  running_node orders_node{all, {"orders"}};
  running_node billing_node{all, {"billing"}};
  test_worker mail{amqp_url(), shared, completes};
  test_worker pack{amqp_url(), own, completes};
  constexpr int n = 30;
  publish_to_both_until_completed(n);
  // Each delivery ran once: none timed out for a result that was dropped.
  CAF_CHECK_EQUAL(mail.seen().size(), size_t{2 * n});
}

CAF_TEST(results parked for a database wait in its own queue and read back whole) {
  amqp_result_parker parker{amqp_url(), shared, {"orders", "billing"},
                            std::chrono::seconds{10}};
  std::vector<send_result> rs;
  for (int64_t id : {7, 8})
    rs.push_back({id, dispatch_tag_of("billing") + "-5f1d-4a8e-9c2b-1d2e3f4a5b6c",
                  "Mail", outcome::completed, "", ""});
  CAF_REQUIRE(!parker.park("billing", rs));
  amqp_result_source parked{amqp_url(), shared, 10, queue_type::classic, "billing"};
  std::vector<incoming_message> got;
  CAF_REQUIRE(wait_until([&] {
    auto more = parked.fetch(10, std::chrono::milliseconds{200});
    if (more)
      got.insert(got.end(), more->begin(), more->end());
    return !got.empty();
  }));
  auto content = read_result_message(got.front().body);
  CAF_REQUIRE_EQUAL(content.results.size(), 2u);
  CAF_CHECK_EQUAL(content.results[1].delivery_id, 8);
  CAF_CHECK_EQUAL(content.results[0].dispatch_id, rs[0].dispatch_id);
  CAF_CHECK(!parked.ack_through(got.back().delivery_tag));
  // Nothing went to the shared results queue or to orders' parked one.
  amqp_result_source orders{amqp_url(), shared, 10, queue_type::classic, "orders"};
  auto none = orders.fetch(10, std::chrono::milliseconds{300});
  CAF_REQUIRE(none);
  CAF_CHECK(none->empty());
}

CAF_TEST_FIXTURE_SCOPE_END()
