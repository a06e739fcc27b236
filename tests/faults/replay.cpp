#define CAF_SUITE faults.replay
#include <caf/test/unit_test.hpp>

#include <set>

#include "tests/faults/fault_cluster.hpp"

using namespace outbox;
using namespace outbox::testing;

// An operator replays past events to a consumer that lost its data
// (outboxctl replay): new deliveries of one job and queue for exactly the
// retained events of a time range, made while the cluster runs, sent and
// completed like routed ones; nothing for the other route.

namespace {

std::string db_now(fault_cluster& c) {
  return must_exec(c.db, "SELECT now()::text").text(0, 0);
}

int64_t max_delivery_id(fault_cluster& c) {
  return must_exec(c.db, "SELECT coalesce(max(id), 0) FROM " + all_deliveries(c.names)
                           + " d").int64(0, 0);
}

std::set<int64_t> ids(const pg_rows& rows) {
  std::set<int64_t> out;
  for (int i = 0; i < rows.size(); ++i)
    out.insert(rows.int64(i, 0));
  return out;
}

// Waits until the table holds `total` deliveries and none is open (settle()
// expects two per event: a replay makes more).
bool all_done(fault_cluster& c, int64_t total) {
  return wait_until([&] {
    auto rows = must_exec(c.db, "SELECT count(*), count(*) FILTER (WHERE status"
                                " IN ('pending', 'dispatched')) FROM "
                                  + all_deliveries(c.names) + " d");
    return rows.int64(0, 0) == total && rows.int64(0, 1) == 0;
  }, std::chrono::seconds{120});
}

void publish_and_settle(fault_cluster& c, int n) {
  c.publish_in_background(n, 0);
  c.wait_published();
  c.settle();
}

} // namespace

CAF_TEST(a replay of a time range delivers exactly the events of the range) {
  fault_cluster c;
  c.start_all();
  c.start_workers();
  publish_and_settle(c, 30);
  auto since = db_now(c);
  publish_and_settle(c, 20);
  auto until = db_now(c);
  publish_and_settle(c, 10);
  auto in_range = ids(must_exec(c.db, "SELECT id FROM " + c.names.events
                                        + " WHERE created_at >= $1::timestamptz"
                                          " AND created_at < $2::timestamptz",
                                {since, until}));
  CAF_REQUIRE_EQUAL(in_range.size(), 20u);
  auto range = " --since '" + since + "' --until '" + until + "'";
  auto jobs = " --job J --queue " + c.jobs_queue;
  // Refused before anything is written.
  CAF_CHECK_EQUAL(c.outboxctl("replay --job X --queue " + c.jobs_queue + range).first, 2);
  CAF_CHECK_EQUAL(c.outboxctl("replay" + jobs).first, 2);
  CAF_CHECK_EQUAL(c.outboxctl("replay" + jobs + range + " --event 1").first, 2);
  CAF_CHECK_EQUAL(c.outboxctl("replay" + jobs + " --since yesterdayish").first, 2);
  CAF_CHECK_EQUAL(c.outboxctl("replay" + jobs + range + " --event-type nope").first, 2);
  auto before = max_delivery_id(c);
  auto [dry_rc, dry] = c.outboxctl("replay" + jobs + range + " --dry-run");
  CAF_CHECK_EQUAL(dry_rc, 0);
  CAF_CHECK(dry.find("20 events match; 20 deliveries") != std::string::npos);
  CAF_CHECK_EQUAL(max_delivery_id(c), before); // a dry run makes nothing
  auto [rc, out] = c.outboxctl("replay" + jobs + range);
  CAF_REQUIRE_EQUAL(rc, 0);
  CAF_CHECK(out.find("replayed 20 deliveries") != std::string::npos);
  CAF_REQUIRE(all_done(c, 60 * 2 + 20));
  CAF_CHECK_EQUAL(c.count_status("failed"), 0);
  // Each replayed send says so in the dispatcher's log.
  CAF_CHECK_EQUAL(c.lines_with("dispatcher", "replayed=true"), 20);
  auto made = must_exec(c.db, "SELECT event_id, job, queue FROM " + all_deliveries(c.names)
                                + " d WHERE id > $1 ORDER BY event_id",
                        {std::to_string(before)});
  std::set<int64_t> replayed;
  for (int i = 0; i < made.size(); ++i) {
    replayed.insert(made.int64(i, 0));
    CAF_CHECK_EQUAL(made.text(i, 1), "J");
    CAF_CHECK_EQUAL(made.text(i, 2), c.jobs_queue);
  }
  CAF_CHECK_EQUAL(made.size(), 20);
  CAF_CHECK(replayed == in_range);
  CAF_CHECK_EQUAL(c.count_status("completed"), 60 * 2 + 20);
  // The workers ran each replayed delivery once more.
  CAF_CHECK_EQUAL(c.runs_of("J"), 60 + 20);
  CAF_CHECK_EQUAL(c.runs_of("K"), 60);
  // By id: one event again; one whose delivery is still in the table (a
  // failed one, say) is skipped: `outboxctl retry` is for that.
  auto first = *in_range.begin();
  must_exec(c.db, "INSERT INTO " + c.names.deliveries
                    + " (event_id, job, queue, delivery_timeout_seconds, status,"
                      " failed_at, finished_at)"
                      " VALUES ($1, 'J', $2, 5, 'failed', now(), now())",
            {std::to_string(first), c.jobs_queue});
  auto [one_rc, one] = c.outboxctl("replay" + jobs + " --event "
                                   + std::to_string(first) + " "
                                   + std::to_string(*in_range.rbegin()));
  CAF_CHECK_EQUAL(one_rc, 0);
  CAF_CHECK(one.find("replayed 1 deliveries") != std::string::npos);
  CAF_CHECK(one.find("1 skipped") != std::string::npos);
  CAF_REQUIRE(all_done(c, 60 * 2 + 20 + 1 + 1)); // the inserted failed one too
  CAF_CHECK_EQUAL(c.runs_of("J"), 60 + 20 + 1);
}
