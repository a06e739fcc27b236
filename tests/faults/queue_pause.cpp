#define CAF_SUITE faults.queue_pause
#include <caf/test/unit_test.hpp>

#include <rapidjson/document.h>

#include "tests/faults/fault_cluster.hpp"

using namespace outbox;
using namespace outbox::testing;

// An operator's pause of a queue (outboxctl pause, schema/018): kept in
// the database, honoured by every dispatcher within a pass and after a
// restart; nothing new goes out, nothing fails for the pause, the other
// queue goes on, and a resume (or the end of `--for`) drains the queue.

namespace {

int64_t count_in(fault_cluster& c, const std::string& queue,
                 const std::string& status) {
  return must_exec(c.db, "SELECT count(*) FROM " + all_deliveries(c.names)
                           + " d WHERE queue = $1 AND status = $2",
                   {queue, status})
    .int64(0, 0);
}

std::string dispatcher_of(const fault_cluster& c) {
  return "dispatcher " + c.jobs_queue;
}

// The pause as `outboxctl status --json` shows it for the jobs queue: who
// paused it and why ("" while the status shows no pause).
std::string shown_pause(fault_cluster& c, const std::string& flags) {
  auto [rc, out] = run_command(std::string{OUTBOXCTL_PATH} + " status --json "
                               + flags);
  rapidjson::Document doc;
  if (rc != 0 || doc.Parse(out.c_str()).HasParseError() || !doc.IsObject()
      || !doc.HasMember("queues") || !doc["queues"].HasMember(c.jobs_queue.c_str()))
    return "";
  auto& q = doc["queues"][c.jobs_queue.c_str()];
  if (!q.HasMember("paused"))
    return "";
  auto& p = q["paused"];
  return std::string{p["pausedBy"].GetString()} + ": " + p["reason"].GetString();
}

// Holds while the pause is in effect: the jobs queue's dispatcher shows it,
// then makes `passes` more passes (a second each while paused, so the
// window is some `passes` seconds however slow the machine), and the
// sweeper passes too. All along, nothing of the jobs queue is out or sent,
// and nothing of it fails or expires. Returns the mail queue's completions
// meanwhile (the other queue goes on).
int64_t hold_paused(fault_cluster& c, int64_t runs_before, int passes) {
  auto paused = [&] { return c.gauge(dispatcher_of(c), "paused") == 1; };
  CAF_REQUIRE(wait_until(paused, std::chrono::seconds{60}));
  auto start = c.passes(dispatcher_of(c)).value_or(0);
  auto sweeps = c.passes("sweeper").value_or(0);
  auto mail_done = count_in(c, c.mail_queue, "completed");
  bool quiet = true;
  auto held = wait_until([&] {
    quiet = quiet && count_in(c, c.jobs_queue, "dispatched") == 0
            && count_in(c, c.jobs_queue, "failed") == 0
            && count_in(c, c.jobs_queue, "expired") == 0
            && c.runs_of("J") == runs_before;
    return !quiet
           || (c.passes(dispatcher_of(c)).value_or(0) >= start + passes
               && c.passes("sweeper").value_or(0) > sweeps);
  }, std::chrono::seconds{300});
  CAF_REQUIRE(held);
  CAF_CHECK(quiet);
  CAF_CHECK(paused());
  return count_in(c, c.mail_queue, "completed") - mail_done;
}

} // namespace

CAF_TEST(a paused queue sends nothing new and fails nothing and resume drains it) {
  fault_cluster c;
  c.start_all();
  c.start_workers(5);
  c.keep_publishing(40);
  CAF_REQUIRE(wait_until([&] { return count_in(c, c.jobs_queue, "completed") >= 40; },
                         std::chrono::seconds{120}));
  // Bad input is refused before anything is written.
  CAF_CHECK_EQUAL(c.outboxctl("pause no.such.queue").first, 2);
  CAF_CHECK_EQUAL(c.outboxctl("pause " + c.jobs_queue + " --for 10x").first, 2);
  CAF_CHECK_EQUAL(c.outboxctl("resume " + c.jobs_queue + " --for 1m").first, 2);
  // A queue out of the config may still be resumed; one never paused says so.
  auto [gone_rc, gone] = c.outboxctl("resume no.such.queue");
  CAF_CHECK_EQUAL(gone_rc, 0);
  CAF_CHECK(gone.find("was not paused") != std::string::npos);
  auto [rc, out] = c.outboxctl("pause " + c.jobs_queue
                               + " --reason 'stock service upgrade'");
  CAF_REQUIRE_EQUAL(rc, 0);
  CAF_CHECK(out.find("paused by") != std::string::npos);
  // What was out when the pause took effect finishes as usual.
  CAF_REQUIRE(wait_until([&] { return count_in(c, c.jobs_queue, "dispatched") == 0; },
                         std::chrono::seconds{60}));
  auto mail_meanwhile = hold_paused(c, c.runs_of("J"), 15);
  CAF_CHECK_GREATER(mail_meanwhile, 0);
  CAF_CHECK_GREATER(count_in(c, c.jobs_queue, "pending"), 0);
  auto who = shown_pause(c, "--connect 127.0.0.1:" + c.status_port());
  CAF_CHECK(who.find("@") != std::string::npos);
  CAF_CHECK(who.find(": stock service upgrade") != std::string::npos);
  CAF_REQUIRE_EQUAL(c.outboxctl("resume " + c.jobs_queue).first, 0);
  CAF_REQUIRE(wait_until([&] { return c.gauge(dispatcher_of(c), "paused") == 0; },
                         std::chrono::seconds{60}));
  auto v = c.settle();
  c.check("queue paused and resumed", v);
  CAF_CHECK_EQUAL(v.sent_again, 0);
  CAF_CHECK_EQUAL(c.lines_with("dispatcher", "event=queue_paused"), 1);
  CAF_CHECK_EQUAL(c.lines_with("dispatcher", "event=queue_resumed"), 1);
  CAF_CHECK_EQUAL(shown_pause(c, "--connect 127.0.0.1:" + c.status_port()), "");
}

CAF_TEST(a pause survives a restart of every node and --for ends it by itself) {
  fault_cluster c;
  CAF_REQUIRE_EQUAL(c.outboxctl("pause " + c.jobs_queue + " --reason maintenance").first,
                    0);
  c.start_all();
  c.start_workers();
  c.publish_in_background(60, 0);
  c.wait_published();
  hold_paused(c, 0, 3);
  // Every node stops and starts again: the pause is in the database.
  for (auto* n : {&c.dispatcher_node, &c.router_node, &c.status_node})
    (*n)->stop();
  c.start_all();
  hold_paused(c, 0, 5);
  CAF_CHECK_EQUAL(count_in(c, c.mail_queue, "completed"), 60);
  CAF_CHECK_EQUAL(count_in(c, c.jobs_queue, "pending"), 60);
  CAF_CHECK(shown_pause(c, "--db --config " + c.dir + "outbox.json")
              .find(": maintenance")
            != std::string::npos);
  // A new pause replaces the old one; this one ends by itself.
  CAF_REQUIRE_EQUAL(c.outboxctl("pause " + c.jobs_queue + " --for 3s").first, 0);
  auto v = c.settle();
  c.check("queue paused across a restart", v);
  CAF_CHECK_EQUAL(v.completed, 120);
  CAF_CHECK_EQUAL(v.sent_again, 0);
  CAF_CHECK_EQUAL(shown_pause(c, "--db --config " + c.dir + "outbox.json"), "");
  // Ended by itself: a resume finds nothing to end.
  auto [rc, out] = c.outboxctl("resume " + c.jobs_queue);
  CAF_CHECK_EQUAL(rc, 0);
  CAF_CHECK(out.find("was not paused") != std::string::npos);
}
