#define CAF_SUITE core.config
#include <caf/test/unit_test.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/base/errors.hpp"
#include "core/config/config.hpp"

using namespace outbox;

namespace {

std::string no_env(const char*) { return {}; }

std::string env_with_urls(const char* name) {
  std::string n = name;
  if (n == "OUTBOX_DATABASE_URL")
    return "postgresql://app:s3cret@db.example:5433/shop";
  if (n == "OUTBOX_AMQP_URL")
    return "amqp://app:s3cret@mq.example:5673/prod";
  return {};
}

const char* good = R"({
  "databaseUrl": "postgresql://postgres@127.0.0.1:5432/postgres",
  "amqpUrl": "amqp://guest:guest@127.0.0.1:5672/",
  "eventsTableName": "shop_events",
  "batchSize": 50,
  "routes": {
    "stock.changed": [
      {"job": "PublishStockJob", "queue": "stock.publish",
       "retryDelaysSeconds": [60, 120], "deliveryTimeoutSeconds": 30},
      {"job": "IndexJob", "queue": "search.index", "repeatLastDelay": true,
       "retryDelaysSeconds": [1, 5], "ttlSeconds": 3600, "merge": "json-merge"}
    ],
    "order.placed": [{"job": "MailJob", "queue": "mail", "retryDelaysSeconds": []}]
  }
})";

std::string errors_of(const std::string& json) {
  auto cfg = parse_config(json, no_env);
  if (cfg)
    return "";
  return render(cfg.error());
}

} // namespace

CAF_TEST(a valid config is read with defaults filled in) {
  auto cfg = parse_config(good, no_env);
  CAF_REQUIRE(cfg);
  CAF_CHECK_EQUAL(cfg->names.events, "shop_events");
  CAF_CHECK_EQUAL(cfg->names.deliveries, "outbox_deliveries");
  CAF_CHECK_EQUAL(cfg->batch_size, 50);
  CAF_CHECK_EQUAL(cfg->router_linger_ms, 5);
  CAF_CHECK_EQUAL(cfg->router_linger_min_events, 6);
  CAF_CHECK_EQUAL(cfg->max_in_flight, 1000);
  CAF_REQUIRE_EQUAL(cfg->routes.size(), 3u);
  auto stock = cfg->routes_for("stock.changed");
  CAF_REQUIRE_EQUAL(stock.size(), 2u);
  CAF_CHECK_EQUAL(stock[0].rules.retry_delays_seconds,
                  (std::vector<int32_t>{60, 120}));
  CAF_CHECK_EQUAL(stock[0].rules.delivery_timeout_seconds, 30);
  CAF_CHECK(stock[0].rules.merge == merge_mode::replace);
  CAF_CHECK(stock[1].rules.repeat_last_delay);
  CAF_CHECK_EQUAL(stock[1].rules.ttl_seconds, 3600);
  CAF_CHECK(stock[1].rules.merge == merge_mode::json_merge);
  CAF_CHECK(cfg->routes_for("order.placed")[0].rules.retry_delays_seconds.empty());
  CAF_CHECK_EQUAL(cfg->queues(),
                  (std::vector<std::string>{"mail", "search.index", "stock.publish"}));
}

CAF_TEST(the router linger can be set or turned off) {
  auto cfg = parse_config(R"({"routes": {}, "routerLingerMs": 0,
                              "routerLingerMinEvents": 20})", no_env);
  CAF_REQUIRE(cfg);
  CAF_CHECK_EQUAL(cfg->router_linger_ms, 0);
  CAF_CHECK_EQUAL(cfg->router_linger_min_events, 20);
}

CAF_TEST(the in flight limit can be set) {
  auto cfg = parse_config(R"({"routes": {}, "maxInFlight": 1})", no_env);
  CAF_REQUIRE(cfg);
  CAF_CHECK_EQUAL(cfg->max_in_flight, 1);
}

CAF_TEST(environment variables override the connection urls) {
  auto cfg = parse_config(good, env_with_urls);
  CAF_REQUIRE(cfg);
  CAF_CHECK_EQUAL(cfg->database_url, "postgresql://app:s3cret@db.example:5433/shop");
  CAF_CHECK_EQUAL(cfg->amqp_url, "amqp://app:s3cret@mq.example:5673/prod");
}

CAF_TEST(a bad url from the environment names the variable) {
  auto cfg = parse_config(R"({"routes": {}})", [](const char* name) {
    return std::string{name} == "OUTBOX_AMQP_URL" ? "http://u:s3cret@h/"
                                                  : std::string{};
  });
  CAF_REQUIRE(!cfg);
  CAF_CHECK_EQUAL(render(cfg.error()),
                  "config_invalid: OUTBOX_AMQP_URL: is not a valid "
                  "amqp://user:password@host:port/vhost URL");
}

CAF_TEST(each bad value is reported with its path and rule) {
  struct bad_case {
    const char* json;
    const char* expected;
  };
  bad_case cases[] = {
    {R"({"routes": {"a": [{"job": "J"}]}})", R"(routes["a"][0].queue: is required)"},
    {R"({"routes": {"a": [{"job": "", "queue": "q"}]}})",
     R"(routes["a"][0].job = "": must be a non-empty string)"},
    {R"({"routes": {"a": [{"job": "J", "queue": "q", "retryDelaysSeconds": [1, -5]}]}})",
     R"(routes["a"][0].retryDelaysSeconds[1] = -5: must be a positive integer)"},
    {R"({"routes": {"a": [{"job": "J", "queue": "q", "retryDelaysSeconds": [0]}]}})",
     R"(routes["a"][0].retryDelaysSeconds[0] = 0: must be a positive integer)"},
    {R"({"routes": {"a": [{"job": "J", "queue": "q", "retryDelaysSeconds": 5}]}})",
     R"(routes["a"][0].retryDelaysSeconds = 5: must be a list of positive integers)"},
    {R"({"routes": {"a": [{"job": "J", "queue": "q", "deliveryTimeoutSeconds": 0}]}})",
     R"(routes["a"][0].deliveryTimeoutSeconds = 0: must be a positive integer)"},
    {R"({"routes": {"a": [{"job": "J", "queue": "q", "ttlSeconds": -1}]}})",
     R"(routes["a"][0].ttlSeconds = -1: must be an integer >= 0)"},
    {R"({"routes": {"a": [{"job": "J", "queue": "q", "repeatLastDelay": "yes"}]}})",
     R"(routes["a"][0].repeatLastDelay = "yes": must be true or false)"},
    {R"({"routes": {"a": [{"job": "J", "queue": "q", "merge": "zip"}]}})",
     R"(routes["a"][0].merge = "zip": must be one of "replace", "json-merge", "none")"},
    {R"({"routes": {"a": [{"job": "J", "queue": "q", "colour": 1}]}})",
     R"(routes["a"][0].colour: unknown key)"},
    {R"({"routes": {"a": []}})", R"(routes["a"] = []: must be a non-empty list of routes)"},
    {R"({"routes": {"a": [{"job": "J", "queue": "q"}, {"job": "J", "queue": "q"}]}})",
     R"(routes["a"][1]: repeats job "J" on queue "q")"},
    {R"({"routes": {"a": [{"job": "J", "queue": "amq.x"}]}})",
     R"(routes["a"][0].queue = "amq.x": must not start with "amq.")"},
    {R"({"routes": {}, "batchSize": 0})", "batchSize = 0: must be an integer from 1 to 10000"},
    {R"({"routes": {}, "batchSize": 10001})", "batchSize = 10001: must be an integer from 1 to 10000"},
    {R"({"routes": {}, "maxInFlight": 0})", "maxInFlight = 0: must be an integer from 1 to 100000"},
    {R"({"routes": {}, "maxInFlight": 100001})",
     "maxInFlight = 100001: must be an integer from 1 to 100000"},
    {R"({"routes": {}, "maxInFlight": "10"})", "maxInFlight = \"10\": must be an integer from 1 to 100000"},
    {R"({"routes": {}, "routerLingerMs": -1})", "routerLingerMs = -1: must be an integer from 0 to 1000"},
    {R"({"routes": {}, "routerLingerMs": 2.5})", "routerLingerMs = 2.5: must be an integer from 0 to 1000"},
    {R"({"routes": {}, "routerLingerMinEvents": 0})",
     "routerLingerMinEvents = 0: must be an integer from 1 to 10000"},
    {R"({"routes": {}, "eventsTableName": "Events"})",
     "eventsTableName = \"Events\": must start with a lower-case letter"},
    {R"({"routes": {}, "deliveriesTableName": "d; DROP TABLE x"})",
     "deliveriesTableName = \"d; DROP TABLE x\": may hold only lower-case letters"},
    {R"({"routes": {}, "eventsTableName": "same", "deliveriesTableName": "same"})",
     "must be three different names"},
    {R"({"routes": {}, "bogus": true})", "bogus: unknown key"},
    {R"({"routes": {}, "batchSize": 5, "batchSize": 6})", "batchSize: given more than once"},
    {R"({})", "routes: is required"},
    {R"({"routes": {}, "databaseUrl": "postgresql://u:pw@h/db?nosuchoption=1"})",
     "databaseUrl: is not a valid libpq connection URI"},
    {R"({"routes": {}, "amqpUrl": "http://u:pw@h/"})",
     "amqpUrl: is not a valid amqp://user:password@host:port/vhost URL"},
    {R"({"routes": {}, "amqpUrl": "amqp://u:pw@h/?cacertfile=/ca.pem"})",
     "amqpUrl: has a query other than heartbeat=N"},
  };
  for (auto& c : cases) {
    auto text = errors_of(c.json);
    CAF_MESSAGE("input " << c.json);
    if (text.find(c.expected) == std::string::npos)
      CAF_FAIL("expected «" << c.expected << "» in «" << text << "»");
    CAF_CHECK(text.rfind("config_invalid: ", 0) == 0);
  }
}

CAF_TEST(all problems are reported at once) {
  auto text = errors_of(R"({"batchSize": -1, "routes": {"a": [{"queue": ""}],
    "b": [{"job": "J", "queue": "q", "retryDelaysSeconds": ["x"]}]}})");
  CAF_CHECK_NOT_EQUAL(text.find("batchSize = -1"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(text.find(R"(routes["a"][0].job: is required)"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(text.find(R"(routes["a"][0].queue = "")"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(text.find(R"(routes["b"][0].retryDelaysSeconds[0] = "x")"),
                      std::string::npos);
}

CAF_TEST(credentials never appear in errors) {
  auto text = errors_of(R"({"routes": {}, "databaseUrl": "postgresql://u:hunter2@h/db?bad=1",
                            "amqpUrl": "amqps://u:hunter2@h:5671/", "batchSize": "hunter2"})");
  CAF_CHECK_NOT_EQUAL(text, "");
  CAF_CHECK_EQUAL(text.find("hunter2@"), std::string::npos);
}

CAF_TEST(text that is not json is unreadable with its offset) {
  auto cfg = parse_config("{\"routes\": {", no_env);
  CAF_REQUIRE(!cfg);
  CAF_CHECK(cfg.error() == errc::config_unreadable);
  CAF_CHECK_NOT_EQUAL(render(cfg.error()).find("offset"), std::string::npos);
  auto missing = load_config("/nonexistent/outbox.json", no_env);
  CAF_REQUIRE(!missing);
  CAF_CHECK_NOT_EQUAL(render(missing.error()).find("cannot open config file"),
                      std::string::npos);
}

CAF_TEST(a top level time to live is the default of every route) {
  auto cfg = parse_config(R"({"ttlSeconds": 600, "routes": {"e": [
    {"job": "A", "queue": "q"},
    {"job": "B", "queue": "q", "ttlSeconds": 60},
    {"job": "C", "queue": "q", "ttlSeconds": 0}]}})",
                          no_env);
  CAF_REQUIRE(cfg);
  CAF_CHECK_EQUAL(cfg->routes.at(0).rules.ttl_seconds, 600);
  CAF_CHECK_EQUAL(cfg->routes.at(1).rules.ttl_seconds, 60);
  CAF_CHECK_EQUAL(cfg->routes.at(2).rules.ttl_seconds, 0); // never expires
  CAF_CHECK_NOT_EQUAL(errors_of(R"({"ttlSeconds": -1, "routes": {}})")
                        .find("ttlSeconds = -1: must be an integer >= 0"),
                      std::string::npos);
}

CAF_TEST(retention keeps final deliveries for hours per status) {
  auto defaults = parse_config(R"({"routes": {}})", no_env);
  CAF_REQUIRE(defaults);
  auto& d = defaults->retention;
  CAF_CHECK(d.enabled);
  CAF_CHECK_EQUAL(d.hours_of(delivery_status::completed), 6.0);
  CAF_CHECK_EQUAL(d.hours_of(delivery_status::superseded), 6.0);
  CAF_CHECK_EQUAL(d.hours_of(delivery_status::failed), 168.0);
  CAF_CHECK_EQUAL(d.hours_of(delivery_status::expired), 168.0);
  CAF_CHECK_EQUAL(d.hours_of(delivery_status::pending), 0.0);
  CAF_CHECK_EQUAL(d.longest_hours(), 168.0);
  // Fractional hours (windows of seconds for tests); a member left out
  // keeps its default; 0 keeps that status forever.
  auto set = parse_config(R"({"routes": {}, "retentionHours": {"completed": 0.5,
                              "failed": 0, "expired": 720}})", no_env);
  CAF_REQUIRE(set);
  CAF_CHECK(set->retention.enabled);
  CAF_CHECK_EQUAL(set->retention.completed_hours, 0.5);
  CAF_CHECK_EQUAL(set->retention.superseded_hours, 6.0);
  CAF_CHECK_EQUAL(set->retention.failed_hours, 0.0);
  CAF_CHECK_EQUAL(set->retention.longest_hours(), 720.0);
  auto off = parse_config(R"({"routes": {}, "retentionHours": false})", no_env);
  CAF_REQUIRE(off);
  CAF_CHECK(!off->retention.enabled);
  auto empty = parse_config(R"({"routes": {}, "retentionHours": {}})", no_env);
  CAF_REQUIRE(empty);
  CAF_CHECK(empty->retention.enabled);
  CAF_CHECK_EQUAL(empty->retention.completed_hours, 6.0);
}

CAF_TEST(bad retention values are reported with their path) {
  auto has = [](const std::string& json, const std::string& part) {
    auto text = errors_of(json);
    if (text.find(part) == std::string::npos)
      CAF_ERROR(json << ": expected \"" << part << "\", got: " << text);
  };
  auto hours_rule = std::string{": must be a number of hours from 0 (keep "
                                "forever) to 876000, e.g. 6 or 0.5"};
  has(R"({"routes": {}, "retentionHours": {"completed": -1}})",
      "retentionHours.completed = -1" + hours_rule);
  has(R"({"routes": {}, "retentionHours": {"failed": "6"}})",
      "retentionHours.failed = \"6\"" + hours_rule);
  has(R"({"routes": {}, "retentionHours": {"expired": 876001}})",
      "retentionHours.expired = 876001" + hours_rule);
  has(R"({"routes": {}, "retentionHours": {"superseded": null}})",
      "retentionHours.superseded = null" + hours_rule);
  has(R"({"routes": {}, "retentionHours": {"pending": 1}})",
      "retentionHours.pending: unknown key");
  has(R"({"routes": {}, "retentionHours": {"completed": 1, "completed": 2}})",
      "retentionHours.completed: given more than once");
  auto whole_rule = std::string{": must be an object of hours per final status "
                                "(completed, superseded, failed, expired), or "
                                "false to keep every delivery"};
  has(R"({"routes": {}, "retentionHours": true})", "retentionHours = true" + whole_rule);
  has(R"({"routes": {}, "retentionHours": 6})", "retentionHours = 6" + whole_rule);
  has(R"({"routes": {}, "retentionHours": [6]})", "retentionHours = [6]" + whole_rule);
}

CAF_TEST(immediate delivery is on unless switched off) {
  auto on = parse_config(R"({"routes": {}})", no_env);
  CAF_REQUIRE(on);
  CAF_CHECK_EQUAL(on->deliver_immediately, true);
  auto off = parse_config(R"({"deliverImmediately": false, "routes": {}})", no_env);
  CAF_REQUIRE(off);
  CAF_CHECK_EQUAL(off->deliver_immediately, false);
  CAF_CHECK_NOT_EQUAL(errors_of(R"({"deliverImmediately": "no", "routes": {}})")
                        .find("deliverImmediately = \"no\": must be true or false"),
                      std::string::npos);
}

CAF_TEST(direct publish follows enabled except and OUTBOX_ENABLED) {
  auto cfg = parse_config(
    R"({"except": ["metrics.*", "presence.?", "[ab].ping"], "routes": {}})", no_env);
  CAF_REQUIRE(cfg);
  CAF_CHECK(cfg->enabled);
  CAF_CHECK(cfg->publishes_directly("metrics.cpu"));
  CAF_CHECK(cfg->publishes_directly("metrics.disk.free"));
  CAF_CHECK(cfg->publishes_directly("presence.x"));
  CAF_CHECK(!cfg->publishes_directly("presence.xy"));
  CAF_CHECK(cfg->publishes_directly("b.ping"));
  CAF_CHECK(!cfg->publishes_directly("c.ping"));
  CAF_CHECK(!cfg->publishes_directly("order.placed"));
  CAF_CHECK(!cfg->publishes_directly("metrics"));
  auto off = parse_config(R"({"enabled": false, "routes": {}})", no_env);
  CAF_REQUIRE(off);
  CAF_CHECK(off->publishes_directly("order.placed"));
  auto env_off = [](const char* name) -> std::string {
    return std::string{name} == "OUTBOX_ENABLED" ? "false" : "";
  };
  auto by_env = parse_config(R"({"enabled": true, "routes": {}})", env_off);
  CAF_REQUIRE(by_env);
  CAF_CHECK(!by_env->enabled);
  auto env_on = [](const char* name) -> std::string {
    return std::string{name} == "OUTBOX_ENABLED" ? "1" : "";
  };
  auto back_on = parse_config(R"({"enabled": false, "routes": {}})", env_on);
  CAF_REQUIRE(back_on);
  CAF_CHECK(back_on->enabled);
}

CAF_TEST(bad direct publish settings are reported) {
  auto errs = errors_of(R"({"enabled": "yes", "except": ["", 3, "ok.*"],
                            "routes": {}})");
  CAF_CHECK_NOT_EQUAL(errs.find("enabled = \"yes\": must be true or false"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(errs.find("except[0] = \"\": must be a pattern"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(errs.find("except[1] = 3: must be a pattern"),
                      std::string::npos);
  CAF_CHECK_EQUAL(errs.find("except[2]"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(errors_of(R"({"except": "metrics.*", "routes": {}})")
                        .find("except = \"metrics.*\": must be an array"),
                      std::string::npos);
  auto env_bad = [](const char* name) -> std::string {
    return std::string{name} == "OUTBOX_ENABLED" ? "maybe" : "";
  };
  auto bad = parse_config(R"({"routes": {}})", env_bad);
  CAF_REQUIRE(!bad);
  CAF_CHECK_NOT_EQUAL(render(bad.error()).find(
                        "OUTBOX_ENABLED: must be true, false, 1 or 0"),
                      std::string::npos);
}

CAF_TEST(the shipped example configs are valid) {
  for (auto name : {"outbox.json", "demo.json"}) {
    auto cfg = load_config(std::string{OUTBOX_SOURCE_DIR} + "/config/" + name, no_env);
    if (!cfg)
      CAF_FAIL(name << ": " << render(cfg.error()));
    CAF_CHECK(!cfg->routes.empty());
  }
}

namespace {

// The config's problems for one route of event type "e".
std::string route_errors(const std::string& route) {
  return errors_of(R"({"routes": {"e": [)" + route + "]}}");
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

CAF_TEST(only small regular files are read as config) {
  // /dev/zero was read without end; a FIFO would wait for a writer.
  auto zero = load_config("/dev/zero", no_env);
  CAF_REQUIRE(!zero);
  CAF_CHECK(mentions(render(zero.error()), "is not a regular file"));
  auto dir = load_config("/tmp", no_env);
  CAF_REQUIRE(!dir);
  CAF_CHECK(mentions(render(dir.error()), "is not a regular file"));
  auto path = std::string{"/tmp/outbox-config-test-big.json"};
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    CAF_REQUIRE(f != nullptr);
    std::string line(1024, ' ');
    for (int i = 0; i < 1025; ++i)
      std::fputs(line.c_str(), f);
    std::fclose(f);
  }
  auto big = load_config(path, no_env);
  std::remove(path.c_str());
  CAF_REQUIRE(!big);
  CAF_CHECK(mentions(render(big.error()), "is larger than 1048576 bytes"));
}

// The URLs with their passwords can live in files of their own.
CAF_TEST(urls can come from files named by databaseUrlFile and amqpUrlFile) {
  auto dir = std::string{"/tmp/outbox-config-test-urls-"} + std::to_string(::getpid());
  auto db_file = dir + ".db", mq_file = dir + ".mq";
  auto write = [](const std::string& path, const char* text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    CAF_REQUIRE(f != nullptr);
    std::fputs(text, f);
    std::fclose(f);
  };
  write(db_file, "postgresql://app:s3cret@db.example:5433/shop\r\nthe first line counts\n");
  write(mq_file, "amqp://app:s3cret@mq.example:5673/prod");
  auto routes = std::string{R"("routes": {"e": [{"job": "J", "queue": "q"}]})"};
  auto cfg = parse_config("{\"databaseUrlFile\": \"" + db_file
                            + "\", \"amqpUrlFile\": \"" + mq_file + "\", "
                            + routes + "}",
                          no_env);
  CAF_REQUIRE(cfg);
  CAF_CHECK_EQUAL(cfg->database_url, "postgresql://app:s3cret@db.example:5433/shop");
  CAF_CHECK_EQUAL(cfg->amqp_url, "amqp://app:s3cret@mq.example:5673/prod");
  // The environment still wins, as over an inline URL.
  cfg = parse_config("{\"databaseUrlFile\": \"" + db_file + "\", " + routes + "}",
                     env_with_urls);
  CAF_REQUIRE(cfg);
  CAF_CHECK_EQUAL(cfg->amqp_url, "amqp://app:s3cret@mq.example:5673/prod");
  struct bad_case {
    std::string json;
    const char* says;
  };
  std::vector<bad_case> cases{
    {"{\"databaseUrl\": \"postgresql://x\", \"databaseUrlFile\": \"" + db_file
       + "\", " + routes + "}",
     "databaseUrlFile: give databaseUrl or databaseUrlFile, not both"},
    {"{\"amqpUrlFile\": \"" + dir + ".missing\", " + routes + "}",
     "amqpUrlFile: cannot read"},
    {"{\"amqpUrlFile\": \"/dev/zero\", " + routes + "}", "is not a regular file"},
  };
  write(mq_file, "http://app:s3cret@mq.example/");
  cases.push_back({"{\"amqpUrlFile\": \"" + mq_file + "\", " + routes + "}",
                   "amqpUrlFile:"});
  for (auto& c : cases) {
    auto bad = parse_config(c.json, no_env);
    if (bad) {
      CAF_ERROR("case " << c.says << ": accepted");
      continue;
    }
    auto text = render(bad.error());
    if (!mentions(text, c.says) || mentions(text, "s3cret"))
      CAF_ERROR("case " << c.says << ": " << text);
  }
  std::remove(db_file.c_str());
  std::remove(mq_file.c_str());
}

CAF_TEST(a config nested deeply or holding a NUL byte is unreadable) {
  auto deep = parse_config("{\"routes\": " + std::string(100000, '[')
                             + std::string(100000, ']') + "}",
                           no_env);
  CAF_REQUIRE(!deep);
  CAF_CHECK_EQUAL(render(deep.error()),
                  "config_unreadable: nested deeper than 16 levels");
  // Text after a NUL byte was silently ignored.
  auto nul = parse_config(std::string{"{\"routes\": {}}\0{\"x\":", 20}, no_env);
  CAF_REQUIRE(!nul);
  CAF_CHECK_EQUAL(render(nul.error()), "config_unreadable: contains a NUL byte");
}

CAF_TEST(an event type listed twice in routes is refused) {
  auto text = errors_of(R"({"routes": {"e": [{"job": "A", "queue": "q"}],
                                         "e": [{"job": "B", "queue": "q"}]}})");
  CAF_CHECK(mentions(text, "routes[\"e\"]: given more than once"));
}

CAF_TEST(table and function names PostgreSQL reserves are refused) {
  for (auto name : {"select", "user", "order", "table", "pg_class", "pg_x"}) {
    auto text = errors_of(R"({"eventsTableName": ")" + std::string{name}
                          + R"(", "routes": {}})");
    CAF_CHECK(mentions(text, "eventsTableName = \"" + std::string{name} + "\""));
  }
  CAF_CHECK(mentions(errors_of(R"({"publishFunctionName": "select", "routes": {}})"),
                     "is a keyword of PostgreSQL's SQL"));
  CAF_CHECK(mentions(errors_of(R"({"deliveriesTableName": "pg_class", "routes": {}})"),
                     "must not start with \"pg_\""));
  // Unreserved keywords and names merely containing one are fine.
  CAF_CHECK_EQUAL(errors_of(R"({"eventsTableName": "events", "routes": {}})"), "");
  CAF_CHECK_EQUAL(errors_of(R"({"eventsTableName": "user_events", "routes": {}})"),
                  "");
}

CAF_TEST(jobs and queues must be names the broker and workers take) {
  CAF_CHECK(mentions(route_errors(R"({"job": ")" + std::string(256, 'j')
                                  + R"(", "queue": "q"})"),
                     "job = \"jjj"));
  CAF_CHECK(mentions(route_errors(R"({"job": ")" + std::string(256, 'j')
                                  + R"(", "queue": "q"})"),
                     "must have at most 255 bytes"));
  CAF_CHECK_EQUAL(route_errors(R"({"job": ")" + std::string(255, 'j')
                               + R"(", "queue": "q"})"),
                  "");
  CAF_CHECK(mentions(route_errors(R"({"job": "A\u0000B", "queue": "q"})"),
                     "must not contain control characters"));
  CAF_CHECK(mentions(route_errors(R"({"job": "A", "queue": "q\u0000"})"),
                     "must not contain control characters"));
  CAF_CHECK(mentions(route_errors(R"({"job": "A", "queue": "a\nb"})"),
                     "must not contain control characters"));
  CAF_CHECK(mentions(route_errors(R"({"job": "A", "queue": "   "})"),
                     "must not be only spaces"));
  CAF_CHECK(mentions(errors_of(R"({"routes": {"a\u0001": [{"job": "A", "queue": "q"}]}})"),
                     "routes[\"a\\u0001\"]: an event type must not contain "
                     "control characters"));
}
