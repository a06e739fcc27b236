#define CAF_SUITE status_view.status_json
#include <caf/test/unit_test.hpp>

#include <cmath>

#include "status_view/status_report.hpp"

using namespace outbox;

// The JSON of `outboxctl status --json` is read by scripts: its keys, their
// types and which keys are left out are pinned here as whole documents.

namespace {

cluster_status sample() {
  cluster_status s;
  s.databases.emplace_back();
  s.databases[0].ok = true;
  s.databases[0].counts.unrouted_events = 3;
  s.databases[0].counts.oldest_unrouted_age_seconds = 1.5;
  s.databases[0].counts.per_status = {{"pending", 2}, {"completed", 7}};
  s.databases[0].counts.oldest_open_age_seconds = 0.25;
  s.databases[0].counts.per_queue["q"].per_status = {{"dispatched", 1}};
  s.databases[0].counts.per_queue["q"].oldest_open_age_seconds = 2;
  s.databases[0].counts.per_queue["q"].blocked_keys = 1;
  s.databases[0].counts.per_queue["q"].longest_held_key_seconds = 30.5;
  s.databases[0].counts.connections = {{"host:1", 6}};
  node_view n;
  n.name = "host:1";
  n.roles = {"dispatcher"};
  n.queues = {"q"};
  n.up = false;
  n.wakeups_degraded = "listen connection lost";
  n.lifecycle = {{"completed", 7}};
  actor_view a;
  a.metrics.name = "dispatcher q";
  a.metrics.role = "dispatcher";
  a.metrics.queue = "q";
  a.metrics.passes = 4;
  a.metrics.rows = 5;
  a.metrics.errors = 1;
  a.metrics.last_pass_ms = 1700000000000;
  a.metrics.connected = false;
  a.metrics.last_error = "not in the JSON";
  a.metrics.counters = {{"nacked", 2}};
  a.metrics.gauges = {{"in_flight_window", 40}};
  n.actors.push_back(a);
  s.nodes.push_back(n);
  return s;
}

// Every status is there, zeros included.
std::string counts_json(const char* pending, const char* dispatched,
                        const char* completed) {
  return std::string{"{\"completed\":"} + completed + ",\"dispatched\":"
         + dispatched + ",\"expired\":0,\"failed\":0,\"pending\":" + pending
         + ",\"superseded\":0}";
}

} // namespace

CAF_TEST(the status of a cluster with its nodes) {
  std::string deliveries = counts_json("2", "0", "7");
  std::string queue = counts_json("0", "1", "0");
  CAF_CHECK_EQUAL(
    status_json(sample(), true),
    "{\"database\":{\"ok\":true},\"unroutedEvents\":3,"
    "\"oldestUnroutedAgeSeconds\":1.5,\"deliveries\":" + deliveries
      + ",\"oldestOpenAgeSeconds\":0.25,\"queues\":{\"q\":{\"deliveries\":"
      + queue + ",\"oldestOpenAgeSeconds\":2.0,\"blockedKeys\":1,"
      "\"longestHeldKeySeconds\":30.5}},\"connections\":{\"host:1\":6},"
      "\"nodes\":[{\"name\":"
      "\"host:1\",\"up\":false,\"roles\":[\"dispatcher\"],\"queues\":[\"q\"],"
      "\"wakeupsOk\":false,\"wakeupsDegraded\":\"listen connection lost\","
      "\"draining\":false,\"actors\":[{\"name\":\"dispatcher q\",\"role\":\"dispatcher\","
      "\"queue\":\"q\",\"up\":true,\"passes\":4,\"rows\":5,\"errors\":1,"
      "\"lastPassMs\":1700000000000,\"connected\":false,\"counters\":"
      "{\"nacked\":2},\"gauges\":{\"in_flight_window\":40}}],"
      "\"lifecycle\":{\"completed\":7}}]}");
}

CAF_TEST(the status from the database alone has no nodes) {
  auto s = sample();
  s.nodes.clear();
  auto json = status_json(s, false);
  CAF_CHECK_EQUAL(json.find("\"nodes\""), std::string::npos);
  CAF_CHECK_NOT_EQUAL(json.find("\"unroutedEvents\":3"), std::string::npos);
}

CAF_TEST(an unavailable database has its reason and no counts) {
  auto s = sample();
  s.databases[0].ok = false;
  s.databases[0].error = "cannot connect";
  s.nodes[0].wakeups_degraded.clear();
  auto json = status_json(s, true);
  CAF_CHECK_EQUAL(json.rfind("{\"database\":{\"ok\":false,\"error\":"
                             "\"cannot connect\"},\"nodes\":[{\"name\"",
                             0),
                  0u);
  CAF_CHECK_NOT_EQUAL(json.find("\"wakeupsOk\":true,\"draining\":false,\"actors\""),
                      std::string::npos);
}

CAF_TEST(a value JSON cannot carry gives an error object) {
  auto s = sample();
  s.databases[0].counts.oldest_open_age_seconds = std::nan("");
  CAF_CHECK_EQUAL(status_json(s, false).rfind("{\"error\":", 0), 0u);
}

// A queue an operator paused shows who, why, since when and until when;
// the end is left out of a pause until resumed. The table says so too.
CAF_TEST(a paused queue shows its pause) {
  auto s = sample();
  s.nodes.clear();
  queue_pause p;
  p.paused_seconds = 90;
  p.paused_at = 1700000000;
  p.paused_by = "ops@host";
  p.reason = "upgrade \x1b[2J";
  p.ends_in_seconds = 30;
  s.databases[0].counts.paused["q"] = p;
  CAF_CHECK_NOT_EQUAL(
    status_json(s, false).find(
      "\"longestHeldKeySeconds\":30.5,\"paused\":{\"pausedAt\":1700000000,"
      "\"pausedSeconds\":90.0,\"pausedBy\":\"ops@host\",\"reason\":"
      "\"upgrade \\u001B[2J\",\"endsInSeconds\":30.0}}"),
    std::string::npos);
  auto table = status_table(s, false);
  CAF_CHECK_NOT_EQUAL(table.find("q (paused)"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(
    table.find("paused 1.5m ago by \"ops@host\", resumes in 30.0s: "
               "\"upgrade \\x1b[2J\""),
    std::string::npos);
  s.databases[0].counts.paused["q"].ends_in_seconds = -1;
  CAF_CHECK_NOT_EQUAL(status_json(s, false).find("\"reason\":\"upgrade \\u001B[2J\"}}"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(status_table(s, false).find("until resumed"),
                      std::string::npos);
}

CAF_TEST(a cluster of several databases shows each under its name) {
  auto s = sample();
  s.nodes.clear();
  s.databases[0].name = "orders";
  database_status billing;
  billing.name = "billing";
  billing.error = "cannot connect";
  s.databases.insert(s.databases.begin(), billing);
  auto json = status_json(s, false);
  CAF_CHECK_EQUAL(json.rfind("{\"databases\":{\"billing\":{\"database\":{\"ok\":"
                             "false,\"error\":\"cannot connect\"}},\"orders\":"
                             "{\"database\":{\"ok\":true},\"unroutedEvents\":3,",
                             0),
                  0u);
  auto table = status_table(s, false);
  CAF_CHECK_EQUAL(table.rfind("== database billing ==\ndatabase: unavailable "
                              "(cannot connect)\n\n== database orders ==\n"
                              "unrouted events: 3",
                              0),
                  0u);
  // Each database's connections of the relay, by node.
  CAF_CHECK_NOT_EQUAL(table.find("relay connections: 6 (host:1 6)\n"),
                      std::string::npos);
  CAF_CHECK_NOT_EQUAL(json.find("\"connections\":{\"host:1\":6}"), std::string::npos);
}
