#define CAF_SUITE core.config_databases
#include <caf/test/unit_test.hpp>

#include <string>

#include <unistd.h>

#include "core/base/errors.hpp"
#include "core/config/config.hpp"

using namespace outbox;

namespace {

std::string no_env(const char*) { return {}; }

// Two databases: orders takes every default, billing its own URL, batch
// size, time to live and routes.
const char* two = R"({
  "amqpUrl": "amqp://guest:guest@127.0.0.1:5672/",
  "databaseUrl": "postgresql://outbox@db1.example/orders",
  "batchSize": 50,
  "routes": {"order.placed": [{"job": "MailJob", "queue": "mail"}]},
  "databases": {
    "orders": {},
    "billing": {"databaseUrl": "postgresql://outbox@db2.example/billing",
                "batchSize": 20, "ttlSeconds": 60,
                "routes": {"invoice.due": [{"job": "Dun", "queue": "dunning"}],
                           "order.paid": [{"job": "Book", "queue": "mail"}]}}
  }
})";

std::string errors_of(const std::string& json,
                      env_lookup env = no_env) {
  auto all = parse_cluster_config(json, env);
  return all ? "" : render(all.error());
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos;
       at = text.find(part, at + 1))
    ++n;
  return n;
}

} // namespace

CAF_TEST(a config without databases serves one named default) {
  auto all = parse_cluster_config(R"({"routes": {}})", no_env);
  CAF_REQUIRE(all);
  CAF_CHECK(!all->named);
  CAF_REQUIRE_EQUAL(all->databases.size(), 1u);
  CAF_CHECK_EQUAL(all->databases[0].database, "default");
  CAF_CHECK(all->find("default") != nullptr);
  CAF_CHECK(all->find("orders") == nullptr);
}

CAF_TEST(each database takes the top level as its defaults) {
  auto all = parse_cluster_config(two, no_env);
  CAF_REQUIRE(all);
  CAF_CHECK(all->named);
  CAF_REQUIRE_EQUAL(all->databases.size(), 2u);
  // Sorted by name.
  auto& billing = all->databases[0];
  auto& orders = all->databases[1];
  CAF_CHECK_EQUAL(billing.database, "billing");
  CAF_CHECK_EQUAL(orders.database, "orders");
  CAF_CHECK_EQUAL(orders.database_url, "postgresql://outbox@db1.example/orders");
  CAF_CHECK_EQUAL(orders.batch_size, 50);
  CAF_CHECK_EQUAL(orders.queues(), (std::vector<std::string>{"mail"}));
  CAF_CHECK_EQUAL(billing.database_url, "postgresql://outbox@db2.example/billing");
  CAF_CHECK_EQUAL(billing.batch_size, 20);
  CAF_CHECK_EQUAL(billing.amqp_url, orders.amqp_url);
  // The entry's routes replace the defaults' whole; its ttlSeconds is the
  // default of its routes.
  CAF_CHECK_EQUAL(billing.queues(), (std::vector<std::string>{"dunning", "mail"}));
  CAF_CHECK(billing.routes_for("order.placed").empty());
  auto dunning = billing.routes_for("invoice.due");
  CAF_REQUIRE_EQUAL(dunning.size(), 1u);
  CAF_CHECK_EQUAL(dunning[0].rules.ttl_seconds, 60);
  auto mail = orders.routes_for("order.placed");
  CAF_REQUIRE_EQUAL(mail.size(), 1u);
  CAF_CHECK_EQUAL(mail[0].rules.ttl_seconds, 0);
}

CAF_TEST(an entry inherits the default ttl into its own routes) {
  auto all = parse_cluster_config(R"({"ttlSeconds": 30, "databases": {
    "a": {"routes": {"e": [{"job": "J", "queue": "q"}]}}}})", no_env);
  CAF_REQUIRE(all);
  CAF_CHECK_EQUAL(all->databases[0].routes[0].rules.ttl_seconds, 30);
}

CAF_TEST(a program of one database refuses a config of two) {
  auto one = parse_config(two, no_env);
  CAF_REQUIRE(!one);
  CAF_CHECK_EQUAL(render(one.error()),
                  "config_invalid: databases: this program serves one database "
                  "and the config names 2");
  auto single = parse_config(R"({"databases": {"only": {"routes": {}}}})", no_env);
  CAF_REQUIRE(single);
  CAF_CHECK_EQUAL(single->database, "only");
}

CAF_TEST(every problem of every database is reported at once) {
  auto text = errors_of(R"({
    "batchSize": 0,
    "routes": {},
    "databases": {
      "Orders": {},
      "a": {"batchSize": 20000, "amqpUrl": "amqp://x/"},
      "b": 5,
      "c": {"routes": {"e": [{"job": "J"}]}},
      "d": {}
    }
  })");
  CAF_MESSAGE(text);
  CAF_CHECK_EQUAL(text.rfind("config_invalid: ", 0), 0u);
  CAF_CHECK_NOT_EQUAL(text.find(R"(databases = "Orders": a name is 1 to 32 of a-z, 0-9 and _)"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(text.find("databases.a.amqpUrl: the broker is the cluster's: "
                                "give it at the top level"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(text.find("databases.b = 5: must be an object of this "
                                "database's settings"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(text.find(R"(databases.c.routes["e"][0].queue: is required)"),
                      std::string::npos);
  // A default's problem is told once, at its own path, not per database.
  CAF_CHECK_EQUAL(count_of(text, "batchSize = 0: must be an integer from 1 to 10000"),
                  1u);
  CAF_CHECK_EQUAL(count_of(text, "databases.c.batchSize"), 0u);
  // c and d inherit the default URL and events table: one outbox twice.
  CAF_CHECK_NOT_EQUAL(text.find("databases.d: the same database and "
                                "eventsTableName as databases.c"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(text.find("databases.d: the same database and "
                                "deliveriesTableName as databases.c"),
                      std::string::npos);
}

CAF_TEST(an entry keeps the required keys required) {
  auto text = errors_of(R"({"databases": {"a": {}}})");
  CAF_CHECK_EQUAL(text, "config_invalid: databases.a.routes: is required");
}

CAF_TEST(the databases object must name at least one) {
  CAF_CHECK_EQUAL(errors_of(R"({"routes": {}, "databases": {}})"),
                  "config_invalid: databases = {}: must be a non-empty object "
                  "of database name -> settings");
  CAF_CHECK_EQUAL(errors_of(R"({"routes": {}, "databases": []})"),
                  "config_invalid: databases = []: must be a non-empty object "
                  "of database name -> settings");
}

CAF_TEST(a name given twice or too long is refused) {
  auto text = errors_of(R"({"routes": {}, "databases": {
    "a": {"eventsTableName": "a_events"}, "a": {"eventsTableName": "b_events"},
    "abcdefghijabcdefghijabcdefghijabc": {}}})");
  CAF_CHECK_NOT_EQUAL(text.find("databases.a: given more than once"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(text.find("a name is 1 to 32"), std::string::npos);
}

CAF_TEST(two outboxes of one database keep apart by their tables) {
  auto all = parse_cluster_config(R"({"routes": {}, "databases": {
    "a": {}, "b": {"eventsTableName": "b_events", "deliveriesTableName": "b_deliveries",
                   "migrationsTableName": "b_migrations",
                   "publishFunctionName": "b_publish"}}})",
                                  no_env);
  CAF_REQUIRE(all);
  CAF_CHECK_EQUAL(all->databases[1].names.events, "b_events");
}

CAF_TEST(the database url of the environment needs a config of one) {
  auto env = [](const char* name) {
    return std::string{name} == "OUTBOX_DATABASE_URL"
             ? std::string{"postgresql://u:s3cret@h/db"}
             : std::string{};
  };
  auto text = errors_of(R"({"routes": {}, "databases": {"a": {}}})", env);
  CAF_CHECK_EQUAL(text, "config_invalid: OUTBOX_DATABASE_URL: applies to a "
                        "config of one database; with databases give each its "
                        "databaseUrl or databaseUrlFile");
  CAF_CHECK_EQUAL(text.find("s3cret"), std::string::npos);
  auto one = parse_cluster_config(R"({"routes": {}})", env);
  CAF_REQUIRE(one);
  CAF_CHECK_EQUAL(one->databases[0].database_url, "postgresql://u:s3cret@h/db");
}

CAF_TEST(a queue two databases share has one type) {
  auto text = errors_of(R"({"routes": {"e": [{"job": "J", "queue": "q"}]},
    "databases": {"a": {}, "b": {"eventsTableName": "b_events",
      "deliveriesTableName": "b_deliveries", "migrationsTableName": "b_migrations",
      "publishFunctionName": "b_publish", "queueType": "quorum"}}})");
  CAF_CHECK_EQUAL(text, "config_invalid: databases.b: queue \"q\" has another "
                        "queueType than in databases.a (a queue has one type)");
}

CAF_TEST(the shipped example of two databases is valid) {
  auto all = load_cluster_config(std::string{OUTBOX_SOURCE_DIR}
                                   + "/config/two-databases.json",
                                 no_env);
  if (!all)
    CAF_FAIL(render(all.error()));
  CAF_REQUIRE_EQUAL(all->databases.size(), 2u);
  CAF_CHECK_EQUAL(all->databases[0].database, "billing");
  CAF_CHECK_EQUAL(all->databases[0].batch_size, 50);
  CAF_CHECK_EQUAL(all->databases[1].queues(), (std::vector<std::string>{"mail.send"}));
}

CAF_TEST(two outboxes of one database need every table of their own) {
  auto text = errors_of(R"({"routes": {}, "databases": {
    "a": {}, "b": {"eventsTableName": "b_events"}}})");
  CAF_CHECK_NOT_EQUAL(text.find("databases.b: the same database and "
                                "deliveriesTableName as databases.a"),
                      std::string::npos);
  CAF_CHECK_EQUAL(text.find("eventsTableName as"), std::string::npos);
}

CAF_TEST(an entry may give a url file where the top level gives a url) {
  char path[] = "/tmp/outbox_db_url_XXXXXX";
  int fd = mkstemp(path);
  CAF_REQUIRE(fd >= 0);
  std::string url = "postgresql://outbox@db9.example/billing\n";
  CAF_REQUIRE_EQUAL(write(fd, url.data(), url.size()), static_cast<ssize_t>(url.size()));
  close(fd);
  auto all = parse_cluster_config(
    std::string{R"({"databaseUrl": "postgresql://outbox@db1.example/orders",
                    "routes": {}, "databases": {"orders": {},
                    "billing": {"databaseUrlFile": ")"} + path + R"("}}})",
    no_env);
  unlink(path);
  CAF_REQUIRE(all);
  CAF_CHECK_EQUAL(all->databases[0].database_url, "postgresql://outbox@db9.example/billing");
  CAF_CHECK_EQUAL(all->databases[1].database_url, "postgresql://outbox@db1.example/orders");
}
