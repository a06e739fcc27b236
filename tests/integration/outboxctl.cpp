#define CAF_SUITE integration.outboxctl
#include <caf/test/unit_test.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>


#include "core/pg/migrations.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/help_checks.hpp"
#include "tests/integration/test_services.hpp"
#include "tests/support/silent_server.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct run_result {
  int status;
  std::string output;
};

run_result run(const std::string& args) {
  // The config files here name their own database: no override from outside.
  auto [status, output] = run_command("env -u OUTBOX_DATABASE_URL -u OUTBOX_AMQP_URL "
                                      + std::string{OUTBOXCTL_PATH} + " " + args);
  return {status, output};
}

std::string write_config(const std::string& path, const std::string& prefix,
                         const std::string& routes) {
  std::ofstream out{path};
  out << "{\"databaseUrl\": \"" << database_url() << "\",\n"
      << " \"eventsTableName\": \"" << prefix << "events\",\n"
      << " \"deliveriesTableName\": \"" << prefix << "deliveries\",\n"
      << " \"migrationsTableName\": \"" << prefix << "migrations\",\n"
      << " \"publishFunctionName\": \"" << prefix << "publish\",\n"
      << " \"routes\": " << routes << "}\n";
  return path;
}

/// Runs outboxctl, killed after 60 s so that a hang fails the test instead
/// of stalling it; returns the result and the seconds it took.
std::pair<run_result, double> run_bounded(const std::string& args) {
  auto start = std::chrono::steady_clock::now();
  auto [status, output] = run_command(
    "timeout -s KILL 60 env -u OUTBOX_DATABASE_URL -u OUTBOX_AMQP_URL "
    + std::string{OUTBOXCTL_PATH} + " " + args);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return {{status, output}, took.count()};
}

} // namespace

CAF_TEST(migrate applies the schema once and then reports it up to date) {
  auto prefix = unique_prefix();
  auto path = write_config("/tmp/" + prefix + "outbox.json", prefix,
                           R"({"e": [{"job": "J", "queue": "q"}]})");
  auto first = run("migrate --config " + path);
  CAF_CHECK_EQUAL(first.status, 0);
  CAF_CHECK_NOT_EQUAL(first.output.find("applied "
                                        + std::to_string(migrations().size())
                                        + " migration(s)"),
                      std::string::npos);
  auto second = run("migrate --config=" + path);
  CAF_CHECK_EQUAL(second.status, 0);
  CAF_CHECK_NOT_EQUAL(second.output.find("schema is up to date"), std::string::npos);
  schema_names names{prefix + "events", prefix + "deliveries",
                     prefix + "migrations", prefix + "publish", ""};
  auto db = connect_db();
  CAF_CHECK(!check_schema(db, names));
  CAF_CHECK(!drop_schema(db, names));
  std::remove(path.c_str());
}

CAF_TEST(a bad config exits non zero and lists every problem) {
  auto prefix = unique_prefix();
  auto path = write_config("/tmp/" + prefix + "bad.json", prefix,
                           R"({"e": [{"job": "", "queue": "q", "retryDelaysSeconds": [-1]}]})");
  auto r = run("migrate --config " + path);
  CAF_CHECK_EQUAL(r.status, 2);
  CAF_CHECK_NOT_EQUAL(r.output.find(R"(routes["e"][0].job = "": must be a non-empty string)"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(r.output.find(R"(routes["e"][0].retryDelaysSeconds[0] = -1)"),
                      std::string::npos);
  std::remove(path.c_str());
}

CAF_TEST(help names every verb and version names the schema) {
  check_help_and_version(
    "outboxctl", OUTBOXCTL_PATH,
    {"migrate", "status", "failed", "expired", "retry", "forget", "prune",
     "quarantined", "discard", "blocked", "skip"},
    std::string{OUTBOX_SOURCE_DIR} + "/tools/outboxctl/outboxctl.1");
}

CAF_TEST(usage errors and an unreachable database are clear) {
  CAF_CHECK_EQUAL(run("").status, 2);
  auto refused = [](const std::string& args, const std::string& text) {
    auto r = run(args);
    check_ends({r.status, r.output}, 2, text);
  };
  refused("migrate --no-such-flag", "--no-such-flag: no such option");
  refused("prune --hours=x --config /nonexistent.json", "--hours=x: not a valid value");
  refused("status --connect", "--connect: needs a value");
  refused("status --long-help=x", "--long-help: no such option");
  refused("status --config-file=x.ini", "--config-file: not supported by this program");
  refused("frobnicate", "outboxctl: no such verb \"frobnicate\" (see --help)");
  refused("migrate now", "outboxctl migrate: unexpected argument \"now\"");
  refused("migrate --config /nonexistent.json", "cannot open config file");
  auto prefix = unique_prefix();
  auto path = "/tmp/" + prefix + "down.json";
  {
    std::ofstream out{path};
    out << R"({"databaseUrl": "postgresql://u:hunter2@127.0.0.1:1/x?connect_timeout=2",)"
        << R"( "routes": {}})";
  }
  auto down = run("migrate --config " + path);
  CAF_CHECK_EQUAL(down.status, 1);
  CAF_CHECK_NOT_EQUAL(down.output.find("cannot connect to the database at 127.0.0.1:1/x"),
                      std::string::npos);
  CAF_CHECK_EQUAL(down.output.find("hunter2"), std::string::npos);
  std::remove(path.c_str());
}

CAF_TEST(status from the database shows zeros for empty tables) {
  schema_fixture schema;
  auto path = write_config("/tmp/" + unique_prefix() + "status.json",
                           // write_config appends "events", "deliveries"...
                           schema.names.events.substr(
                             0, schema.names.events.size() - std::string{"events"}.size()),
                           R"({"e": [{"job": "J", "queue": "q"}]})");
  auto table = run("status --db --config " + path);
  CAF_CHECK_EQUAL(table.status, 0);
  CAF_CHECK_NOT_EQUAL(table.output.find("unrouted events: 0"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(table.output.find("deliveries: pending 0 dispatched 0 "
                                        "completed 0 failed 0 expired 0 "
                                        "superseded 0"),
                      std::string::npos);
  schema.publish("e", "{}");
  auto json = run("status --db --json --config " + path);
  CAF_CHECK_EQUAL(json.status, 0);
  CAF_CHECK_NOT_EQUAL(json.output.find("\"unroutedEvents\":1"), std::string::npos);
  CAF_CHECK_EQUAL(json.output.find("\"nodes\""), std::string::npos);
  std::remove(path.c_str());
}

CAF_TEST(status without a reachable status node fails clearly) {
  auto r = run("status --connect 127.0.0.1:1");
  CAF_CHECK_EQUAL(r.status, 1);
  CAF_CHECK_NOT_EQUAL(r.output.find("no status node reachable at 127.0.0.1:1"),
                      std::string::npos);
  CAF_CHECK_EQUAL(run("status --db --connect 127.0.0.1:1").status, 2);
  auto bad = run("status --connect 127.0.0.1:http");
  CAF_CHECK_EQUAL(bad.status, 2);
  CAF_CHECK_NOT_EQUAL(bad.output.find("--connect: port must be a number"),
                      std::string::npos);
}

CAF_TEST(a server that accepts and never answers is given up on clearly) {
  silent_server silent;
  CAF_REQUIRE_NOT_EQUAL(silent.port(), 0);
  auto where = "127.0.0.1:" + std::to_string(silent.port());
  auto [cluster, cluster_s] = run_bounded("status --connect " + where);
  CAF_CHECK_EQUAL(cluster.status, 1);
  CAF_CHECK_NOT_EQUAL(cluster.output.find(where + " accepted the connection but did "
                                                  "not answer as a status node"),
                      std::string::npos);
  CAF_CHECK_LESS(cluster_s, 20.0);
  // The database verbs wait on libpq, bounded the same way.
  auto path = "/tmp/" + unique_prefix() + "silent.json";
  {
    std::ofstream out{path};
    out << "{\"databaseUrl\": \"host=127.0.0.1 port=" << silent.port()
        << " user=postgres dbname=postgres\", \"routes\": {}}\n";
  }
  auto [db, db_s] = run_bounded("status --db --config " + path);
  CAF_CHECK_EQUAL(db.status, 1);
  CAF_CHECK_NOT_EQUAL(db.output.find("outboxctl status: "), std::string::npos);
  CAF_CHECK_LESS(db_s, 30.0);
  CAF_MESSAGE("gave up after " << cluster_s << " s (status node), " << db_s
                               << " s (database): " << db.output);
  std::remove(path.c_str());
}
