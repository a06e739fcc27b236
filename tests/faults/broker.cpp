#define CAF_SUITE faults.broker
#include <caf/test/unit_test.hpp>

#include "tests/faults/fault_cluster.hpp"
#include "tests/faults/private_services.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Its own servers first: the scenarios stop them.
struct fixture : private_services, fault_cluster {};

} // namespace

CAF_TEST_FIXTURE_SCOPE(broker_faults, fixture)

CAF_TEST(RabbitMQ stopped while events flow loses nothing and logs little) {
  start_all();
  start_workers();
  // Events keep coming until the fault has done what this scenario is
  // about: however long stopping the broker takes, a backlog builds behind it.
  keep_publishing(150);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") >= 100; }));
  stop_broker();
  // Down until a backlog has built up behind it.
  auto before = count_status("pending");
  CAF_REQUIRE(wait_until([&] { return count_status("pending") >= before + 150; },
                         std::chrono::seconds{120}));
  start_broker();
  // Back: the relay publishes again, with new events still coming.
  auto completed = count_status("completed");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") >= completed + 100; },
                         std::chrono::seconds{120}));
  auto v = settle();
  check("broker stopped", v);
  // A first failure and summaries, not a line per attempt or per event.
  CAF_CHECK_LESS(warning_lines("dispatcher"), 40);
  CAF_CHECK_LESS(warning_lines("router"), 10);
}

// A memory alarm blocks every publisher of the broker, the relay's and the
// workers' results alike (connection.blocked). Nothing is claimed while it
// lasts, what was on its way goes back without an attempt, and the sweep
// leaves the timeouts alone: the workers could not have answered.
CAF_TEST(a broker memory alarm holds publishing and costs no attempt) {
  start_all();
  start_workers(8); // a window of 1,000 would be 8 s of their work
  keep_publishing(50);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") >= 200; },
                         std::chrono::seconds{120}));
  auto before = count_status("pending");
  broker_memory_alarm(true);
  // In effect: a backlog builds behind it ...
  auto in_effect = wait_until([&] { return count_status("pending") >= before + 200; },
                              std::chrono::seconds{120});
  // ... both dispatchers see the broker block them (a publish that was
  // blocked first waits out its confirm timeout of 10 s) ...
  auto blocked = [&](const std::string& queue) {
    return gauge("dispatcher " + queue, "broker_blocked").value_or(0) == 1;
  };
  CAF_CHECK(wait_until([&] { return blocked(jobs_queue) && blocked(mail_queue); },
                       std::chrono::seconds{60}));
  // ... for 20 s by the database's clock, four times the delivery timeout.
  auto since = must_exec(db, "SELECT now()::text").text(0, 0);
  auto lasted = wait_until([&] {
    return must_exec(db, "SELECT now() > $1::timestamptz + interval '20 s'", {since})
             .text(0, 0)
           == "t";
  }, std::chrono::seconds{120});
  broker_memory_alarm(false);
  CAF_REQUIRE(in_effect && lasted);
  auto after = count_status("completed");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") >= after + 200; },
                         std::chrono::seconds{120}));
  auto v = settle();
  check("broker memory alarm", v);
  CAF_CHECK_LESS(v.sent_again * 100, v.expected); // under 1%
  CAF_CHECK_GREATER_OR_EQUAL(lines_with("dispatcher", "event=broker_blocked"), 2);
  CAF_CHECK_GREATER_OR_EQUAL(lines_with("dispatcher", "event=broker_unblocked"), 2);
}

CAF_TEST_FIXTURE_SCOPE_END()
