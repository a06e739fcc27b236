#define CAF_SUITE integration.inbox
#include <caf/test/unit_test.hpp>

// The C++ worker's inbox on real servers: a relay in this process, workers
// (tests/integration/inbox_worker.cpp) as child processes whose every job
// adds 1 to a counter row through the inbox's transaction. Whatever the
// fault, the counter must end equal to the number of events.

#include <csignal>
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iterator>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/wait_until.hpp"
#include "worker/inbox.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

constexpr auto deadline = std::chrono::seconds{90};

struct fixture : cluster_fixture {
  std::string q = queue("inbox");
  std::string inbox_table = queue_prefix + "inbox";
  std::string counter_table = queue_prefix + "counter";
  std::string config_path = "/tmp/" + queue_prefix + "inbox.json";
  std::string url_file = "/tmp/" + queue_prefix + "inbox.url";
  std::vector<std::string> logs;

  fixture() {
    must_exec(db, "CREATE TABLE " + counter_table
                    + " (id int PRIMARY KEY, n bigint NOT NULL)");
    must_exec(db, "INSERT INTO " + counter_table + " VALUES (1, 0)");
    write_private(url_file, database_url());
  }

  ~fixture() {
    for (auto t : {counter_table, inbox_table})
      db.exec("drop", "DROP TABLE IF EXISTS " + t);
    for (auto& f : logs)
      std::remove(f.c_str());
    std::remove(config_path.c_str());
    std::remove(url_file.c_str());
  }

  // A password on a command line is there for every user's ps.
  static void write_private(const std::string& path, const std::string& text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CAF_REQUIRE(fd >= 0);
    CAF_REQUIRE_EQUAL(::write(fd, text.data(), text.size()),
                      static_cast<ssize_t>(text.size()));
    ::close(fd);
  }

  config start_config(std::vector<int32_t> delays, int32_t timeout) {
    auto cfg = make_config({make_route("e", "J", q, std::move(delays), timeout)});
    std::string json = "{\"e\": [{\"job\": \"J\", \"queue\": \"" + q
                       + "\", \"deliveryTimeoutSeconds\": " + std::to_string(timeout)
                       + ", \"retryDelaysSeconds\": [";
    for (size_t i = 0; i < cfg.routes[0].rules.retry_delays_seconds.size(); ++i)
      json += (i ? ", " : "") + std::to_string(cfg.routes[0].rules.retry_delays_seconds[i]);
    write_config_file(config_path, json + "]}]}");
    return cfg;
  }

  std::unique_ptr<child_process> worker(std::vector<std::string> extra = {}) {
    logs.push_back("/tmp/" + queue_prefix + "inbox_worker" + std::to_string(logs.size())
                   + ".log");
    std::vector<std::string> args{"--config",        config_path,  "--queue",
                                  q,                 "--inbox-url-file", url_file,
                                  "--inbox-table",   inbox_table,  "--counter-table",
                                  counter_table};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<child_process>(INBOX_WORKER_PATH, args, logs.back());
  }

  std::string log_text(size_t i) {
    std::ifstream in{logs.at(i)};
    return std::string{std::istreambuf_iterator<char>{in}, {}};
  }

  // Whether worker `i` has started to consume its queue.
  bool consuming(size_t i) {
    return log_text(i).find("event=consuming") != std::string::npos;
  }

  int64_t counter() {
    return must_exec(db, "SELECT n FROM " + counter_table + " WHERE id = 1").int64(0, 0);
  }

  int64_t records() {
    return must_exec(db, "SELECT count(*) FROM " + inbox_table).int64(0, 0);
  }

  // Deliveries sent more than once (resends and retries: `attempts`
  // counts the sends that failed or timed out).
  int64_t sent_again() {
    return must_exec(db, "SELECT count(*) FROM " + all_deliveries(names)
                           + " d WHERE attempts > 0")
      .int64(0, 0);
  }

  void publish_events(int n) {
    for (int i = 0; i < n; ++i)
      publish("e", "{\"i\":" + std::to_string(i) + "}");
  }

  bool all_completed(int n) {
    return count_status("completed") == n && open_deliveries() == 0;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(inbox_tests, fixture)

CAF_TEST(a worker killed between commit and ack leaves one effect per event) {
  constexpr int n = 20;
  running_node node{start_config({1, 1}, 300)};
  auto first = worker({"--kill-after-commit", "3"});
  publish_events(n);
  CAF_REQUIRE(wait_until([&] { return first->exited(); }, deadline));
  // The third job committed and its ack never came: it waits in the queue.
  CAF_CHECK(counter() >= 3);
  auto second = worker();
  CAF_REQUIRE(wait_until([&] { return all_completed(n); }, deadline));
  CAF_CHECK_EQUAL(counter(), n);
  CAF_CHECK_EQUAL(records(), n);
  // Its redelivery found its record (this is what the inbox is for).
  CAF_CHECK_NOT_EQUAL(log_text(1).find("event=job_repeat"), std::string::npos);
  second->signal(SIGTERM);
  CAF_CHECK_EQUAL(second->wait(), 0);
}

CAF_TEST(a delivery timeout shorter than the handler resends and the effect stays one) {
  constexpr int n = 8;
  // Each job takes 1.5 s against a timeout of 1 s: every one is sent again
  // while its first run still holds its record uncommitted. A copy
  // completes (as a repeat, at once) only when it reaches a worker that is
  // free before its own second is up, which the two busy workers decide,
  // not the test: a dozen sends leave room for a slow machine, where three
  // ran out under load (each attempt spent in a busy worker's prefetch).
  running_node node{start_config({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1)};
  auto a = worker({"--job-ms", "1500"});
  auto b = worker({"--job-ms", "1500"});
  // Sends that expire in the queue before a worker consumes would spend
  // the attempts on a slow start, not on the handler: publish once both
  // take jobs.
  CAF_REQUIRE(wait_until([&] { return consuming(0) && consuming(1); }, deadline));
  publish_events(n);
  CAF_REQUIRE(wait_until([&] { return all_completed(n); }, deadline));
  CAF_CHECK(sent_again() > 0); // not vacuous: copies did arrive
  CAF_CHECK_EQUAL(counter(), n);
  a->signal(SIGTERM);
  b->signal(SIGTERM);
  CAF_CHECK_EQUAL(a->wait(), 0);
  CAF_CHECK_EQUAL(b->wait(), 0);
}

CAF_TEST(a broker connection lost after the commit redelivers and the effect stays one) {
  constexpr int n = 12;
  running_node node{start_config({1, 1}, 300)};
  auto w = worker({"--drop-after-commit", "5"});
  publish_events(n);
  CAF_REQUIRE(wait_until([&] { return all_completed(n); }, deadline));
  CAF_CHECK_EQUAL(counter(), n);
  CAF_CHECK_NOT_EQUAL(log_text(0).find("event=job_repeat"), std::string::npos);
  w->signal(SIGTERM);
  CAF_CHECK_EQUAL(w->wait(), 0);
}

CAF_TEST(a handler that fails rolls its writes back with the record) {
  constexpr int n = 6;
  running_node node{start_config({1, 1}, 300)};
  auto w = worker({"--fail-first-run"});
  publish_events(n);
  CAF_REQUIRE(wait_until([&] { return all_completed(n); }, deadline));
  CAF_CHECK_EQUAL(sent_again(), n); // every one ran twice...
  CAF_CHECK_EQUAL(counter(), n);    // ...and its first writes are gone
  w->signal(SIGTERM);
  CAF_CHECK_EQUAL(w->wait(), 0);
}

CAF_TEST(prune removes only expired records while jobs flow) {
  constexpr int n = 10;
  running_node node{start_config({1}, 300)};
  inbox_options io;
  io.database_url = database_url();
  io.table = inbox_table;
  io.keep = std::chrono::hours{24};
  auto ib = inbox::make(io);
  CAF_REQUIRE(ib);
  CAF_REQUIRE(!ib->migrate());
  // 2,500 expired records (more than one batch) and 100 kept ones, of
  // deliveries that do not exist here.
  must_exec(db, "INSERT INTO " + inbox_table
                  + " (source, delivery_id, queue, job, handled_at)"
                    " SELECT 'old', g, 'q', 'J', now() - interval '25 hours'"
                    " FROM generate_series(1, 2500) g");
  must_exec(db, "INSERT INTO " + inbox_table
                  + " (source, delivery_id, queue, job, handled_at)"
                    " SELECT 'recent', g, 'q', 'J', now() - interval '23 hours'"
                    " FROM generate_series(1, 100) g");
  auto w = worker({"--job-ms", "50"});
  publish_events(n);
  CAF_REQUIRE(wait_until([&] { return counter() > 0; }, deadline));
  auto removed = ib->prune(1000);
  CAF_REQUIRE(removed);
  CAF_CHECK_EQUAL(*removed, 2500);
  CAF_REQUIRE(wait_until([&] { return all_completed(n); }, deadline));
  auto left = must_exec(db, "SELECT source, count(*) FROM " + inbox_table
                              + " GROUP BY source ORDER BY source");
  CAF_REQUIRE_EQUAL(left.size(), 2);
  CAF_CHECK_EQUAL(left.text(0, 0), ""); // the flowing jobs' records
  CAF_CHECK_EQUAL(left.int64(0, 1), n);
  CAF_CHECK_EQUAL(left.text(1, 0), "recent");
  CAF_CHECK_EQUAL(left.int64(1, 1), 100);
  CAF_CHECK_EQUAL(counter(), n);
  w->signal(SIGTERM);
  CAF_CHECK_EQUAL(w->wait(), 0);
}

CAF_TEST(an unreachable inbox takes no jobs and charges no attempt) {
  constexpr int n = 6;
  // The inbox in a database of its own, which then refuses connections.
  auto inbox_db = queue_prefix + "inboxdb";
  must_exec(db, "CREATE DATABASE " + inbox_db);
  auto drop_db = [&] {
    db.exec("allow", "ALTER DATABASE " + inbox_db + " ALLOW_CONNECTIONS true");
    db.exec("dropdb", "DROP DATABASE IF EXISTS " + inbox_db + " WITH (FORCE)");
  };
  struct cleanup {
    std::function<void()> f;
    ~cleanup() { f(); }
  } on_exit{drop_db};
  // Later keywords win in libpq's conninfo.
  write_private(url_file, database_url() + " dbname=" + inbox_db);
  auto inbox_conn = pg_connection::connect(database_url() + " dbname=" + inbox_db);
  CAF_REQUIRE(inbox_conn);
  must_exec(*inbox_conn, "CREATE TABLE " + counter_table
                           + " (id int PRIMARY KEY, n bigint NOT NULL)");
  must_exec(*inbox_conn, "INSERT INTO " + counter_table + " VALUES (1, 0)");
  auto inbox_counter = [&] {
    return must_exec(*inbox_conn, "SELECT n FROM " + counter_table + " WHERE id = 1")
      .int64(0, 0);
  };
  running_node node{start_config({1, 1}, 300)};
  auto w = worker();
  publish_events(1);
  CAF_REQUIRE(wait_until([&] { return all_completed(1); }, deadline));
  // The outage: no new connections, and the worker's own is cut.
  must_exec(db, "ALTER DATABASE " + inbox_db + " ALLOW_CONNECTIONS false");
  must_exec(db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = $1 AND pid <> pg_backend_pid()",
            {inbox_db});
  publish_events(n - 1);
  CAF_REQUIRE(wait_until(
    [&] { return log_text(0).find("event=inbox_unavailable") != std::string::npos; },
    deadline));
  // Meanwhile nothing is answered: not completed, not failed, not retried.
  CAF_CHECK_EQUAL(count_status("completed"), 1);
  CAF_CHECK_EQUAL(count_status("failed"), 0);
  CAF_CHECK_EQUAL(sent_again(), 0);
  must_exec(db, "ALTER DATABASE " + inbox_db + " ALLOW_CONNECTIONS true");
  CAF_REQUIRE(wait_until([&] { return all_completed(n); }, deadline));
  CAF_CHECK_NOT_EQUAL(log_text(0).find("event=inbox_back"), std::string::npos);
  inbox_conn = pg_connection::connect(database_url() + " dbname=" + inbox_db);
  CAF_REQUIRE(inbox_conn);
  CAF_CHECK_EQUAL(inbox_counter(), n);
  CAF_CHECK_EQUAL(sent_again(), 0); // the requeues charged no attempt
  w->signal(SIGTERM);
  CAF_CHECK_EQUAL(w->wait(), 0);
}

CAF_TEST(a keep shorter than a repeat can arrive in is refused) {
  auto cfg = make_config({make_route("e", "J", q, {60, 120}, 30)});
  auto floor = inbox_retention_floor(cfg, q);
  CAF_REQUIRE(floor);
  // 60 + 120 of delays, three sends of 30, one more timeout, an hour.
  CAF_CHECK_EQUAL(floor->count(), 60 + 120 + 3 * 30 + 30 + 3600);
  inbox_options io;
  io.database_url = database_url();
  io.table = inbox_table;
  io.keep = *floor - std::chrono::seconds{1};
  CAF_CHECK(!inbox::make(io, floor));
  io.keep = *floor;
  CAF_CHECK(inbox::make(io, floor));
  auto forever = make_config({make_route("e", "J", q, {60}, 30)});
  forever.routes[0].rules.repeat_last_delay = true;
  CAF_CHECK(!inbox_retention_floor(forever, q));
}

CAF_TEST_FIXTURE_SCOPE_END()
