#define CAF_SUITE integration.multi_node
#include <caf/test/unit_test.hpp>

#include <csignal>

#include <rapidjson/document.h>

#include "core/pg/event_probe.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/test_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Three outboxd processes on loopback, as docs/operations.md "A cluster"
// shows: the status node, a router+sweeper node and a dispatcher+results
// node for the one queue.
struct multi_fixture : cluster_fixture {
  std::string q = queue("jobs");
  std::string dir = "/tmp/" + queue_prefix;
  std::string config_path = dir + "outbox.json";
  std::string port = std::to_string(free_port());

  multi_fixture() {
    write_config_file(config_path,
                      "{\"e\": [{\"job\": \"J\", \"queue\": \"" + q
                        + "\", \"retryDelaysSeconds\": [1], "
                          "\"repeatLastDelay\": true, "
                          "\"deliveryTimeoutSeconds\": 3}]}",
                      50);
  }

  std::unique_ptr<child_process> start(const std::string& name,
                                       std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path});
    return std::make_unique<child_process>(OUTBOXD_PATH, args,
                                           dir + name + ".log");
  }

  std::unique_ptr<child_process> status_node() {
    return start("status", {"--roles", "status", "--listen", "127.0.0.1:" + port});
  }
  std::unique_ptr<child_process> router_node(std::string sleep = "1") {
    return start("router", {"--roles=router,sweeper", "--join",
                            "127.0.0.1:" + port, "--sleep", sleep});
  }
  std::unique_ptr<child_process> dispatcher_node(std::string sleep = "1") {
    return start("dispatcher", {"--roles", "dispatcher,results", "--queues", q,
                                "--join=127.0.0.1:" + port, "--sleep=" + sleep});
  }

  /// `outboxctl status --json` parsed; an empty object when unreachable.
  rapidjson::Document status() {
    auto [rc, out] = run_command(std::string{OUTBOXCTL_PATH}
                                 + " status --json --connect 127.0.0.1:" + port);
    rapidjson::Document doc;
    doc.Parse(out.c_str());
    if (rc != 0 || doc.HasParseError() || !doc.IsObject())
      doc.SetObject();
    return doc;
  }

  /// Nodes in the status view that are up / down.
  std::pair<int, int> node_states() {
    auto doc = status();
    int up = 0, down = 0;
    if (doc.HasMember("nodes"))
      for (auto& n : doc["nodes"].GetArray())
        ++(n["up"].GetBool() ? up : down);
    return {up, down};
  }

  /// Whether a session's last statement LISTENed on `channel` (and it idles
  /// there, waiting for notifications).
  bool listening_on(const std::string& channel) {
    auto rows = must_exec(db, "SELECT count(*) FROM pg_stat_activity WHERE "
                              "state = 'idle' AND query = 'LISTEN \"' || $1 || '\"'",
                          {channel});
    return rows.int64(0, 0) >= 1;
  }

  /// Whether the router's event watcher probes the events table.
  bool probing_events() {
    auto rows = must_exec(db, "SELECT count(*) FROM pg_stat_activity WHERE query = $1",
                          {event_probe::sql(names)});
    return rows.int64(0, 0) >= 1;
  }

  /// Whether the start-up is over: all three nodes are up, every actor has
  /// run its first pass, the events are probed for the router and the
  /// new deliveries' channel is listened on for the dispatcher node.
  bool started_up() {
    auto doc = status();
    if (!doc.HasMember("nodes") || doc["nodes"].Size() != 3)
      return false;
    for (auto& n : doc["nodes"].GetArray()) {
      if (!n["up"].GetBool() || !n["wakeupsOk"].GetBool())
        return false;
      for (auto& a : n["actors"].GetArray())
        if (a["passes"].GetInt64() < 1)
          return false;
    }
    return probing_events() && listening_on(names.ready_channel());
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(multi_node_tests, multi_fixture)

CAF_TEST(events complete across three nodes and status shows every node) {
  CAF_MESSAGE("logs in " << dir << "*.log");
  auto s = status_node();
  // With a 60 s sleep only wake-ups move events on in time: the event
  // watcher's probe wakes the router, whose routing transaction's NOTIFY
  // wakes the dispatcher on the other node.
  auto r = router_node("60");
  auto d = dispatcher_node("60");
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::completed;
                     }};
  // Published only after the first passes, so that only wake-ups can move
  // these events on in time.
  CAF_REQUIRE(wait_until([&] { return started_up(); }));
  for (int i = 0; i < 50; ++i)
    publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 50; },
                         std::chrono::seconds{20}));
  auto [rc, table] = run_command(std::string{OUTBOXCTL_PATH}
                                 + " status --connect=127.0.0.1:" + port);
  CAF_CHECK_EQUAL(rc, 0);
  CAF_CHECK_NOT_EQUAL(table.find("nodes: 3"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(table.find("roles router,sweeper"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(table.find("dispatcher " + q), std::string::npos);
  CAF_CHECK_NOT_EQUAL(table.find("completed 50"), std::string::npos);
  // A frozen node (not dead, its TCP connection open) is seen as down
  // through the middleman heartbeats, and joins again once it thaws.
  r->signal(SIGSTOP);
  CAF_CHECK(wait_until([&] { return node_states().second == 1; },
                       std::chrono::seconds{10}));
  r->signal(SIGCONT);
  CAF_CHECK(wait_until([&] { return node_states().first == 3; },
                       std::chrono::seconds{15}));
  // SIGTERM: the current pass finishes, the process exits cleanly.
  for (auto* p : {d.get(), r.get(), s.get()})
    p->signal(SIGTERM);
  CAF_CHECK_EQUAL(d->wait(), 0);
  CAF_CHECK_EQUAL(r->wait(), 0);
  CAF_CHECK_EQUAL(s->wait(), 0);
}

CAF_TEST(a dispatcher node killed mid-run and started again loses nothing) {
  CAF_MESSAGE("logs in " << dir << "*.log");
  auto s = status_node();
  auto r = router_node();
  auto d = dispatcher_node();
  // Each job costs the worker a little (part of the scenario, not a wait),
  // so that 400 of them are still running when the dispatcher node dies.
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       std::this_thread::sleep_for(std::chrono::milliseconds{2});
                       return answer::completed;
                     }};
  CAF_REQUIRE(wait_until([&] { return node_states().first == 3; }));
  const int events = 400;
  for (int i = 0; i < events; ++i)
    publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") >= 40; }));
  d->signal(SIGKILL);
  CAF_CHECK_EQUAL(d->wait(), 128 + SIGKILL);
  auto at_kill = count_status("completed");
  CAF_MESSAGE("killed the dispatcher node with " << at_kill << " completed");
  CAF_CHECK_LESS(at_kill, events); // it really was mid-run
  CAF_REQUIRE(wait_until([&] { return node_states().second == 1; },
                         std::chrono::seconds{10}));
  d = dispatcher_node();
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == events; },
                         std::chrono::seconds{60}));
  CAF_CHECK_EQUAL(open_deliveries(), 0);
  CAF_CHECK_EQUAL(count_status("failed"), 0);
  auto states = node_states();
  CAF_CHECK_EQUAL(states.first, 3);  // the restarted node joined
  CAF_CHECK_EQUAL(states.second, 1); // the killed one stays listed as down
  for (auto* p : {d.get(), r.get(), s.get()})
    p->signal(SIGTERM);
  CAF_CHECK_EQUAL(d->wait(), 0);
  CAF_CHECK_EQUAL(r->wait(), 0);
  CAF_CHECK_EQUAL(s->wait(), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
