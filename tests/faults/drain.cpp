#define CAF_SUITE faults.drain
#include <caf/test/unit_test.hpp>

#include <unistd.h>

#include "tests/faults/fault_cluster.hpp"

using namespace outbox;
using namespace outbox::testing;

// An operator drains every node of a running cluster in turn from the
// control host (outboxctl drain NAME, by the name `outboxctl status`
// shows): each stops claiming, finishes what it has in flight, hands its
// leaderships on and exits 0, exactly as on SIGTERM, and comes back.
// Under a steady load, every delivery completes and none is sent twice.

namespace {

// The node's name in the status view: host:pid.
std::string name_of(const child_process& p) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string{host} + ":" + std::to_string(p.pid());
}

int64_t completed(fault_cluster& c) {
  return c.count_status("completed");
}

} // namespace

CAF_TEST(a rolling drain of every node under load sends nothing twice) {
  fault_cluster c;
  c.start_all();
  c.start_workers(5);
  c.keep_publishing(40);
  CAF_REQUIRE(wait_until([&] { return completed(c) >= 100; },
                         std::chrono::seconds{120}));
  // Refused: a name no node has, and a verb without one.
  auto [unknown_rc, unknown] = run_command(std::string{OUTBOXCTL_PATH}
                                           + " drain nobody:1 --connect 127.0.0.1:"
                                           + c.status_port() + " 2>&1");
  CAF_CHECK_EQUAL(unknown_rc, 1);
  CAF_CHECK(unknown.find("no node of that name") != std::string::npos);
  CAF_CHECK_EQUAL(run_command(std::string{OUTBOXCTL_PATH} + " drain").first, 2);
  struct step {
    std::unique_ptr<child_process>* node;
    void (fault_cluster::*start)();
    const char* log;
  };
  // The dispatcher node first, then the leader of routing, the sweep and
  // retention, then the status node itself.
  for (auto s : {step{&c.dispatcher_node, &fault_cluster::start_dispatcher_node,
                      "dispatcher"},
                 step{&c.router_node, &fault_cluster::start_router_node, "router"},
                 step{&c.status_node, &fault_cluster::start_status_node, "status"}}) {
    CAF_MESSAGE("draining the " << s.log << " node");
    // Asked again until the node is in the view (joined, after a restart
    // of the status node say): until then the name is unknown.
    auto name = name_of(**s.node);
    auto drained = wait_until([&] {
      auto [rc, out] = run_command(std::string{OUTBOXCTL_PATH} + " drain " + name
                                   + " --connect 127.0.0.1:" + c.status_port());
      return rc == 0 && out.find("is draining") != std::string::npos;
    }, std::chrono::seconds{60});
    CAF_REQUIRE(drained);
    // Exactly as SIGTERM: a clean stop, exit 0.
    CAF_CHECK_EQUAL((*s.node)->wait(120), 0);
    CAF_CHECK_EQUAL(c.lines_with(s.log, "event=drain_requested"), 1);
    CAF_CHECK_EQUAL(c.lines_with(s.log, "event=stopped clean=true"), 1);
    auto before = completed(c);
    (c.*s.start)();
    CAF_REQUIRE(wait_until([&] { return completed(c) >= before + 100; },
                           std::chrono::seconds{120}));
  }
  auto v = c.settle();
  c.check("rolling drain of every node", v, 0);
  CAF_CHECK_EQUAL(v.sent_again, 0);
  // The status node showed each drain it passed on (itself included).
  CAF_CHECK_EQUAL(c.lines_with("status", "event=node_draining"), 3);
}
