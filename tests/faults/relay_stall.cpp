#define CAF_SUITE faults.relay_stall
#include <caf/test/unit_test.hpp>

#include <csignal>

#include "tests/faults/fault_cluster.hpp"

using namespace outbox;
using namespace outbox::testing;

// The relay's own stall costs no attempt (core/domain/relay_stalls.hpp):
// the node that applies results is paused, as by a long GC-like stall or a
// frozen VM, while its workers go on answering. The sweeper on another
// node must not time out what the workers answered.

namespace {

void pause_results_node(fault_cluster& c) {
  c.start_all();
  c.start_workers(8);
  c.keep_publishing(50);
  auto completed = [&] { return c.count_status("completed"); };
  CAF_REQUIRE(wait_until([&] { return completed() >= 200; },
                         std::chrono::seconds{120}));
  // Stopped while deliveries are out (a stop that caught too few is
  // undone and tried again).
  auto out_now = [&] {
    return must_exec(c.db, "SELECT count(*) FROM " + c.names.deliveries
                           + " WHERE status = 'dispatched'")
      .int64(0, 0);
  };
  CAF_REQUIRE(wait_until([&] {
    c.dispatcher_node->signal(SIGSTOP);
    if (out_now() >= 2)
      return true;
    c.dispatcher_node->signal(SIGCONT);
    return false;
  }, std::chrono::seconds{120}));
  // In effect for long enough: the database's clock is 10 s past the
  // deadline of every delivery that was out when the node stopped (the
  // timeout is 5 s: a stop of some 15 s), however slow the machine.
  auto last_deadline = must_exec(c.db, "SELECT max(delivery_timeout_at)::text FROM "
                                       + c.names.deliveries
                                       + " WHERE status = 'dispatched'");
  auto all_overdue = [&] {
    return must_exec(c.db, "SELECT now() > $1::timestamptz + interval '10 s'",
                     {last_deadline.text(0, 0)})
             .text(0, 0)
           == "t";
  };
  auto paused_ok = wait_until(all_overdue, std::chrono::seconds{120});
  // The sweeper saw both queues without a live result handler.
  auto held = c.gauge("sweeper", "stalled_queues");
  c.dispatcher_node->signal(SIGCONT);
  CAF_REQUIRE(paused_ok);
  CAF_CHECK_EQUAL(held.value_or(-1), 2);
  auto after = completed();
  CAF_REQUIRE(wait_until([&] { return completed() >= after + 200; },
                         std::chrono::seconds{120}));
  auto v = c.settle();
  c.check("results node paused past the timeout", v);
  // Nothing else in this run costs an attempt: the workers complete every
  // job, and every result reaches the table once the node is back.
  CAF_CHECK_EQUAL(v.sent_again, 0);
  CAF_CHECK_EQUAL(c.lines_with("router", "event=results_stalled"), 2);
  CAF_CHECK_EQUAL(c.lines_with("router", "event=results_back"), 2);
}

} // namespace

CAF_TEST(a paused results node costs no attempt) {
  fault_cluster c;
  pause_results_node(c);
}

// The paused node runs a sweeper of its own: back, its view of the status
// node is 15 s old, and it must hold every queue until a fresh one comes.
CAF_TEST(a paused node with its own sweeper costs no attempt either) {
  fault_cluster c;
  c.dispatcher_roles = "dispatcher,results,sweeper";
  pause_results_node(c);
}

