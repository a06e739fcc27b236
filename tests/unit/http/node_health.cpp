#define CAF_SUITE http.node_health
#include <caf/test/unit_test.hpp>

#include <functional>

#include "tests/unit/case_check.hpp"
#include "http/node_health.hpp"

using namespace outbox;

namespace {

node_report healthy(int64_t now) {
  node_report r;
  r.started_ms = now - 100000;
  r.status_joined = true;
  actor_view a;
  a.metrics.name = "dispatcher q";
  a.metrics.last_pass_ms = now - 1000;
  r.view.actors.push_back(a);
  return r;
}

} // namespace

CAF_TEST(readiness names what is wrong) {
  const int64_t now = 1000000;
  health_rules rules{true, 30000};
  struct {
    const char* name;
    std::function<void(node_report&)> change;
    bool alive, ready;
    const char* problem;
  } cases[] = {
    {"healthy", [](node_report&) {}, true, true, ""},
    {"an actor terminated", [](node_report& r) { r.view.actors[0].up = false; },
     false, false, "dispatcher q has terminated"},
    {"the broker is down",
     [](node_report& r) {
       r.view.actors[0].metrics.connected = false;
       r.view.actors[0].metrics.last_error = "broker_unavailable: the broker at h:1";
     },
     true, false, "dispatcher q: broker_unavailable: the broker at h:1"},
    {"stuck", [&](node_report& r) { r.view.actors[0].metrics.last_pass_ms = now - 31000; },
     true, false, "dispatcher q: no pass for 31 s"},
    {"never passed, long after the start",
     [&](node_report& r) { r.view.actors[0].metrics.last_pass_ms = 0; }, true,
     false, "dispatcher q: no pass for 100 s"},
    {"not joined", [](node_report& r) { r.status_joined = false; }, true, false,
     "not joined to the status node"},
    {"the broker blocks publishing",
     [](node_report& r) { r.view.actors[0].metrics.gauges["broker_blocked"] = 1; },
     true, false,
     "dispatcher q: the broker blocks publishing (a memory or disk alarm); "
     "nothing is sent until it ends"},
    {"the broker no longer blocks",
     [](node_report& r) { r.view.actors[0].metrics.gauges["broker_blocked"] = 0; },
     true, true, ""},
  };
  for (auto& c : cases) {
    auto r = healthy(now);
    c.change(r);
    auto live = liveness(r);
    auto ready = readiness(r, rules, now);
    OUTBOX_CHECK_CASE_EQUAL(c.name, live.ok, c.alive);
    OUTBOX_CHECK_CASE_EQUAL(c.name, ready.ok, c.ready);
    if (!c.ready)
      OUTBOX_CHECK_CASE(c.name, ready.problems.size() == 1
                                  && ready.problems[0] == c.problem);
  }
}

CAF_TEST(no answer from the agent is neither alive nor ready) {
  auto v = readiness(std::nullopt, health_rules{}, 0);
  CAF_CHECK(!v.ok);
  CAF_CHECK(!liveness(std::nullopt).ok);
  CAF_CHECK_EQUAL(health_json(v),
                  "{\"ok\":false,\"problems\":[\"the node's agent did not answer "
                  "in time\"]}\n");
}

CAF_TEST(a node on its own needs no status node) {
  auto r = healthy(1000000);
  r.status_joined = false;
  CAF_CHECK(readiness(r, health_rules{false, 30000}, 1000000).ok);
}
