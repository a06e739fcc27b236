// A short soak of built-in retention: events flow through a real relay
// (router, dispatcher, result handler, sweeper and retention in one
// outboxd) to a worker for about two minutes with a completed window of
// ten seconds. The outbox tables' rows must stay bounded by the window,
// (twice the window for the events, which go a partition at a time),
// not grow with the length of the run, and their size on disk must grow
// clearly slower than the run's rows would need. (Only a vacuum makes the
// space of deleted rows reusable, and autovacuum looks at a database once
// per autovacuum_naptime, 1 min by default: two minutes show the growth
// bend, not yet a flat line.)
#define CAF_SUITE integration.retention_soak
#include <caf/test/unit_test.hpp>

#include <algorithm>
#include <csignal>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/test_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

constexpr int events_per_second = 50;
constexpr int run_seconds = 120;
constexpr int window_seconds = 10;

struct sample {
  int second;
  int64_t events, deliveries, bytes;
};

struct soak_fixture : cluster_fixture {
  std::string q = queue("soak");
  std::string dir = "/tmp/" + queue_prefix;
  std::string config_path = dir + "outbox.json";

  soak_fixture() {
    write_config_file(config_path,
                      "{\"e\": [{\"job\": \"J\", \"queue\": \"" + q + "\"}]}", 100,
                      "\"retentionHours\": {\"completed\": "
                        + std::to_string(window_seconds / 3600.0) + "}, ");
  }

  int64_t count(const std::string& table) {
    return must_exec(db, "SELECT count(*) FROM " + table).int64(0, 0);
  }

  sample take(int second) {
    // Each table's bytes are its partitions' (schema/021, 022); the
    // completion log is what retention trims of the completed ones.
    auto bytes = must_exec(db, "SELECT sum(pg_total_relation_size(relid))::bigint"
                               " FROM (SELECT relid FROM pg_partition_tree($1::regclass)"
                               "       UNION ALL SELECT relid FROM pg_partition_tree($2::regclass)"
                               "       UNION ALL SELECT relid FROM pg_partition_tree($3::regclass)) t",
                           {names.events, names.deliveries,
                            names.deliveries + "_completed"});
    return {second, count(names.events), count(names.deliveries),
            bytes.int64(0, 0)};
  }

  std::string vacuums() {
    auto rows = must_exec(db, "SELECT relname, autovacuum_count, n_dead_tup"
                              " FROM pg_stat_user_tables WHERE relid IN ("
                              "   SELECT relid FROM pg_partition_tree($1::regclass)"
                              "   UNION ALL SELECT relid FROM pg_partition_tree($2::regclass)"
                              "   UNION ALL SELECT relid FROM pg_partition_tree($3::regclass))"
                              " ORDER BY relname",
                          {names.events, names.deliveries,
                           names.deliveries + "_completed"});
    std::string out;
    for (int i = 0; i < rows.size(); ++i)
      out += rows.text(i, 0) + ": " + rows.text(i, 1) + " autovacuums, "
             + rows.text(i, 2) + " dead rows; ";
    return out;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(retention_soak_tests, soak_fixture)

CAF_TEST(the tables stay bounded while events flow through a small window) {
  CAF_MESSAGE("log in " << dir << "relay.log");
  child_process relay{OUTBOXD_PATH,
                      {"--config", config_path, "--roles",
                       "router,dispatcher,results,sweeper", "--sleep", "1"},
                      dir + "relay.log"};
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::completed;
                     }};
  std::vector<sample> samples;
  auto start = std::chrono::steady_clock::now();
  int published = 0;
  // The producer's pace: a tenth of a second's events every 100 ms.
  for (int tick = 0; tick < run_seconds * 10; ++tick) {
    for (int i = 0; i < events_per_second / 10; ++i, ++published)
      publish("e", "{\"n\": " + std::to_string(published) + "}");
    if (tick % 100 == 0 || tick == 80 || tick == run_seconds * 10 - 1)
      samples.push_back(take(tick / 10));
    std::this_thread::sleep_until(start + std::chrono::milliseconds{100 * (tick + 1)});
  }
  for (auto& s : samples)
    CAF_MESSAGE("at " << s.second << " s: " << s.events << " events, "
                      << s.deliveries << " deliveries, " << s.bytes / 1024
                      << " KiB");
  CAF_MESSAGE(vacuums());
  // Every event went through: nothing open is left behind the window.
  CAF_CHECK(wait_until([&] { return open_deliveries() == 0; }));
  CAF_CHECK_GREATER_OR_EQUAL(static_cast<int>(worker.seen().size()), published);
  // Rows: what the window and a few passes hold, not the whole run (which
  // would be `published` of each). The events go a partition of the ring
  // at a time (schema/022): four spans of half the window at most, once
  // the ring has turned with its span for a whole turn.
  int64_t bound = events_per_second * (2 * window_seconds + 10);
  for (auto& s : samples)
    if (s.second >= 2 * window_seconds + 10) {
      CAF_CHECK_LESS_OR_EQUAL(s.events, bound);
      CAF_CHECK_LESS_OR_EQUAL(s.deliveries, bound);
    }
  // Size: the first seconds, before any delivery is old enough to go, give
  // the bytes a row of each table takes; the whole run without retention
  // would take that for every event published.
  auto& first = samples.front();
  auto early = *std::find_if(samples.begin(), samples.end(),
                             [](const sample& s) { return s.second == 8; });
  auto per_event = double(early.bytes - first.bytes) / double(early.events);
  auto unbounded = double(first.bytes) + per_event * published;
  auto end_bytes = double(samples.back().bytes);
  CAF_MESSAGE("at the end " << int64_t(end_bytes / 1024) << " KiB, "
              << int64_t(100 * end_bytes / unbounded) << "% of the "
              << int64_t(unbounded / 1024) << " KiB the run's "
              << published << " events would take");
  CAF_CHECK_LESS(end_bytes, 0.8 * unbounded);
  relay.signal(SIGTERM);
  CAF_CHECK_EQUAL(relay.wait(), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
