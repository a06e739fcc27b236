#define CAF_SUITE cli.node_options
#include <caf/test/unit_test.hpp>

#include "core/base/errors.hpp"
#include "cli/node_options.hpp"

using namespace outbox;

namespace {

config two_queues() {
  config c;
  route a, b;
  a.event_type = b.event_type = "e";
  a.job = "A";
  a.queue = "qa";
  b.job = "B";
  b.queue = "qb";
  c.routes = {a, b};
  return c;
}

std::string problems(const node_flags& f) {
  auto o = make_node_settings(f, two_queues());
  return o ? "ok" : context_of(o.error());
}

} // namespace

CAF_TEST(alone a node runs every role for every queue on loopback) {
  auto o = make_node_settings(node_flags{}, two_queues());
  CAF_REQUIRE(o);
  CAF_CHECK_EQUAL(role_names(o->roles), (std::vector<std::string>{
                              "status", "router", "dispatcher", "results",
                              "sweeper"}));
  CAF_CHECK_EQUAL(o->queues, (std::vector<std::string>{"qa", "qb"}));
  CAF_REQUIRE(o->listen);
  CAF_CHECK_EQUAL(o->listen->host, "127.0.0.1");
  CAF_CHECK_EQUAL(o->listen->port, default_status_port);
  CAF_CHECK_EQUAL(o->sleep_seconds, 1);
}

CAF_TEST(roles and queues come as lists or comma-separated) {
  node_flags f;
  f.roles = {"dispatcher,results"};
  f.queues = {"qb"};
  f.join = "10.0.0.5:4250";
  auto o = make_node_settings(f, two_queues());
  CAF_REQUIRE(o);
  CAF_CHECK(o->has(node_role::dispatcher));
  CAF_CHECK(!o->has(node_role::router));
  CAF_CHECK_EQUAL(role_names(o->roles), (std::vector<std::string>{"dispatcher", "results"}));
  CAF_CHECK_EQUAL(o->queues, (std::vector<std::string>{"qb"}));
  CAF_CHECK(!o->listen);
  CAF_REQUIRE(o->join);
  CAF_CHECK_EQUAL(o->join->host, "10.0.0.5");
  CAF_CHECK_EQUAL(o->join->port, 4250);
}

CAF_TEST(listen takes a port alone and binds loopback) {
  node_flags f;
  f.roles = {"status"};
  f.listen = "5000";
  auto o = make_node_settings(f, two_queues());
  CAF_REQUIRE(o);
  CAF_CHECK_EQUAL(o->listen->host, "127.0.0.1");
  CAF_CHECK_EQUAL(o->listen->port, 5000);
  f.listen = "0.0.0.0:5001";
  f.insecure = true;
  auto any = make_node_settings(f, two_queues());
  CAF_REQUIRE(any);
  CAF_CHECK_EQUAL(any->listen->host, "0.0.0.0");
  CAF_CHECK(any->insecure);
}

CAF_TEST(listening off loopback without TLS takes --insecure) {
  node_flags f;
  f.roles = {"status"};
  for (auto host : {"0.0.0.0", "10.0.0.5", "example.org", "::"}) {
    f.listen = std::string{host} + ":5001";
    auto refused = make_node_settings(f, two_queues());
    CAF_REQUIRE(!refused);
    CAF_CHECK(context_of(refused.error()).find("--insecure")
              != std::string::npos);
  }
  for (auto host : {"127.0.0.1", "127.0.0.2", "localhost", "::1"}) {
    f.listen = std::string{host} + ":5001";
    CAF_CHECK(make_node_settings(f, two_queues()));
  }
}

CAF_TEST(TLS takes all three files and may then leave loopback) {
  node_flags f;
  f.roles = {"status"};
  f.listen = "0.0.0.0:5001";
  f.tls.certificate = "/c.pem";
  auto partial = make_node_settings(f, two_queues());
  CAF_REQUIRE(!partial);
  CAF_CHECK(context_of(partial.error()).find("--tls-ca together")
            != std::string::npos);
  f.tls.key = "/c.key";
  f.tls.ca_file = "/ca.pem";
  auto o = make_node_settings(f, two_queues());
  CAF_REQUIRE(o);
  CAF_REQUIRE(o->tls);
  CAF_CHECK_EQUAL(o->tls->ca_file, "/ca.pem");
  CAF_CHECK_EQUAL(o->tls->passphrase, "");
  f.insecure = true;
  CAF_CHECK(!make_node_settings(f, two_queues()));
}

CAF_TEST(every bad flag is reported at once) {
  node_flags f;
  f.roles = {"router,routr,router"};
  f.queues = {"qc"};
  f.sleep = 0;
  f.listen = "x:99999";
  f.join = "h:";
  CAF_CHECK_EQUAL(problems(f),
                  "--roles: unknown role \"routr\" (known: status, router, "
                  "dispatcher, results, sweeper)\n"
                  "--roles: \"router\" is given twice\n"
                  "--queues: \"qc\" is not the queue of any route\n"
                  "--queues: needs the dispatcher or results role\n"
                  "--sleep: must be an integer number of seconds, 1..3600\n"
                  "--listen: only a node with the status role listens\n"
                  "--join: port must be a number 1..65535");
  node_flags g;
  g.sleep = 3601;
  g.roles = {"router"};
  g.join = "h:";
  CAF_CHECK_EQUAL(problems(g),
                  "--sleep: must be an integer number of seconds, 1..3600\n"
                  "--join: port must be a number 1..65535");
  node_flags h;
  h.join = "h:1";
  CAF_CHECK_EQUAL(problems(h), "--join: the status node is the one others join");
}

CAF_TEST(a queue named twice is refused) {
  // Two dispatchers of one queue in one process would only compete.
  node_flags f;
  f.queues = {"qa,qb,qa"};
  CAF_CHECK_EQUAL(problems(f), "--queues: \"qa\" is given twice");
}

CAF_TEST(every role name parses back to its role) {
  for (auto r : all_node_roles())
    CAF_CHECK(parse_node_role(to_string(r)) == r);
  CAF_CHECK(!parse_node_role("Router"));
  CAF_CHECK(runs_per_queue(node_role::dispatcher));
  CAF_CHECK(runs_per_queue(node_role::results));
  CAF_CHECK(!runs_per_queue(node_role::sweeper));
}
