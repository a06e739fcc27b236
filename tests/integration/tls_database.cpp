// libpq's TLS parameters (sslmode=verify-full, sslrootcert, sslcert, sslkey)
// in the database URL, against the test server's TLS: they reach libpq
// untouched from a direct connection, a whole node (its pool and its
// LISTEN connection, with the broker on amqps:// and a C++ worker) and
// outboxctl, and a server the root certificate does not vouch for is
// refused.
#define CAF_SUITE integration.tls_database
#include <caf/test/unit_test.hpp>

#include <cstdio>

#include "core/base/errors.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/running_worker.hpp"
#include "tests/integration/tls_env.hpp"
#include "tests/integration/wait_until.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct fixture : tls_required, cluster_fixture {
  std::string dir = tls_dir();

  // The test database's URL verified against `root`, with the client
  // certificate, named `app` in pg_stat_activity.
  std::string tls_url(const std::string& root, const std::string& app = "") {
    auto url = database_url() + " sslmode=verify-full sslrootcert=" + root
               + " sslcert=" + dir + "/client.pem sslkey=" + dir + "/client.key";
    return app.empty() ? url : url + " application_name=" + app;
  }

  // How many of `app`'s connections use TLS, and how many do not.
  std::pair<int64_t, int64_t> tls_connections(const std::string& app) {
    auto rows = must_exec(db, "SELECT count(*) FILTER (WHERE s.ssl), "
                              "count(*) FILTER (WHERE NOT s.ssl) "
                              "FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) "
                              "WHERE a.application_name = $1",
                          {app});
    return {rows.int64(0, 0), rows.int64(0, 1)};
  }
};

bool uses_tls(pg_connection& conn) {
  auto rows = must_exec(conn, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
  return rows.text(0, 0) == "t";
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(tls_database_tests, fixture)

CAF_TEST(verify full connects in both url forms) {
  auto kv = pg_connection::connect(tls_url(dir + "/ca.pem"));
  if (!kv)
    CAF_FAIL("key=value form: " << render(kv.error()));
  CAF_CHECK(uses_tls(*kv));
  auto port = std::getenv("OUTBOX_TEST_DB_PORT");
  auto uri = "postgresql://postgres@localhost:" + std::string{port}
             + "/postgres?sslmode=verify-full&sslrootcert=" + dir + "/ca.pem&sslcert="
             + dir + "/client.pem&sslkey=" + dir + "/client.key&connect_timeout=5";
  auto u = pg_connection::connect(uri);
  if (!u)
    CAF_FAIL("URI form: " << render(u.error()));
  CAF_CHECK(uses_tls(*u));
}

CAF_TEST(a server the root certificate does not vouch for is refused) {
  auto c = pg_connection::connect(tls_url(dir + "/other/ca.pem"));
  CAF_REQUIRE(!c);
  CAF_CHECK(c.error() == errc::database_unavailable);
  auto text = render(c.error());
  CAF_MESSAGE("error: " << text);
  CAF_CHECK_EQUAL(text.find("certificate verify failed"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(text.find("with TLS (sslmode=verify-full; check sslrootcert"),
                      std::string::npos);
}

CAF_TEST(a node and a worker run on tls to both servers) {
  auto app = unique_prefix() + "node";
  auto q = queue("tls");
  auto cfg = make_config({make_route("e", "J", q, {60})});
  cfg.database_url = tls_url(dir + "/ca.pem", app);
  auto client = "&certfile=" + dir + "/client.pem&keyfile=" + dir + "/client.key";
  cfg.amqp_url = amqps_url() + client;
  running_node node{cfg};
  std::atomic<int> runs{0};
  running_worker w{amqps_url() + client, q, {{"J", [&](const job_context&) { ++runs; }}}};
  publish("e", R"({"n":1})");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; }));
  CAF_CHECK_EQUAL(runs.load(), 1);
  // Every connection of the node, its LISTEN connection among them, is TLS.
  auto [tls, plain] = tls_connections(app);
  CAF_CHECK_GREATER_OR_EQUAL(tls, 2);
  CAF_CHECK_EQUAL(plain, 0);
}

CAF_TEST(outboxctl takes a tls database url) {
  auto path = "/tmp/" + unique_prefix() + "tls.json";
  write_config_file(path, "{}");
  auto [status, output] = run_command("env OUTBOX_DATABASE_URL='" + tls_url(dir + "/ca.pem")
                                      + "' " + OUTBOXCTL_PATH + " status --db --config "
                                      + path);
  std::remove(path.c_str());
  CAF_CHECK_EQUAL(status, 0);
  if (status != 0)
    CAF_MESSAGE("outboxctl: " << output);
}

CAF_TEST_FIXTURE_SCOPE_END()
