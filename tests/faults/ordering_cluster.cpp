#include "tests/faults/ordering_cluster.hpp"

#include <chrono>
#include <cstdio>
#include <random>

#include <caf/test/unit_test.hpp>

namespace outbox::testing {

namespace {

// Both routes retry without end (nothing fails for good), so every event
// must end completed on both; merge none: every event is delivered.
std::string route_json(const std::string& queue, const char* ordering) {
  return "{\"job\": \"J\", \"queue\": \"" + queue
         + "\", \"retryDelaysSeconds\": [1], \"repeatLastDelay\": true,"
           " \"deliveryTimeoutSeconds\": "
         + std::to_string(ordering_cluster::timeout_seconds)
         + ", \"merge\": \"none\", \"ordering\": \"" + ordering
         + "\", \"onFailure\": \"continue\"}";
}

// Microseconds since the epoch of a timestamptz column, as the journal's.
std::string micros(const std::string& column) {
  return "(extract(epoch FROM " + column + ") * 1000000)::bigint";
}

} // namespace

ordering_cluster::ordering_cluster()
  : ordered_queue(queue("ordered")),
    plain_queue(queue("plain")),
    dir("/tmp/" + queue_prefix + "ordering/"),
    config_path_(dir + "outbox.json"),
    url_(database_url()),
    log_table_(names.deliveries + "_dlog"),
    log_function_(names.deliveries + "_log_dispatch") {
  std::string cmd = "mkdir -p " + dir;
  CAF_REQUIRE_EQUAL(std::system(cmd.c_str()), 0);
  write_config_file(config_path_,
                    "{\"e\": [" + route_json(ordered_queue, "key") + ", "
                      + route_json(plain_queue, "none") + "]}",
                    50, "\"maxInFlight\": " + std::to_string(max_in_flight) + ", ");
  install_dispatch_log();
}

ordering_cluster::~ordering_cluster() {
  stop_ = true;
  for (auto& t : producers_)
    t.join();
  workers_.clear();
  nodes.clear(); // SIGTERM, then SIGKILL: no outboxd outlives the test
  // The log is this test's own: drop_schema knows only the outbox's.
  auto err = db.exec_script("drop the dispatch log",
                            "DROP TABLE IF EXISTS " + log_table_
                              + "; DROP FUNCTION IF EXISTS " + log_function_
                              + "() CASCADE");
  CAF_CHECK(!err);
  std::string cmd = "rm -rf " + dir;
  [[maybe_unused]] auto rc = std::system(cmd.c_str());
}

// A dispatch starts when the claim marks its row dispatched under a new
// dispatch id, or the router inserts it dispatched (claim on route,
// core/domain/handoff.hpp), and ends when anything takes the row out of
// that state (a completion deletes it: schema/016).
// clock_timestamp() at the row's update: a claim that sees a key handed
// on runs after the hand-over committed, so its start is later than the
// end that handed the key on. No payload is copied.
void ordering_cluster::install_dispatch_log() {
  must_exec(db, "CREATE TABLE " + log_table_
                  + " (dispatch_id uuid PRIMARY KEY, delivery_id bigint NOT NULL,"
                    " queue text NOT NULL, key text, node text,"
                    " started_at timestamptz NOT NULL, ended_at timestamptz,"
                    " end_status text, end_error text)");
  must_exec(db, "CREATE FUNCTION " + log_function_ + "() RETURNS trigger "
                "LANGUAGE plpgsql AS $$ BEGIN "
                // A completion moves the row to the completion log. An
                // update that moves a handed send into the logged partition
                // (schema/021) fires the delete and insert triggers of the
                // partitions instead of the update's: the row it became is
                // found by its id (an AFTER trigger sees the statement's
                // changes).
                "IF TG_OP = 'DELETE' THEN "
                "UPDATE " + log_table_ + " l SET ended_at = clock_timestamp(), "
                "end_status = coalesce(m.status, 'completed'), end_error = m.last_error "
                "FROM (SELECT NULL) x LEFT JOIN " + names.deliveries
                + " m ON m.id = OLD.id "
                "WHERE l.dispatch_id = OLD.dispatch_id; "
                "RETURN NULL; END IF; "
                "IF TG_OP = 'UPDATE' AND OLD.status = 'dispatched' "
                "AND (NEW.status <> 'dispatched' "
                "OR NEW.dispatch_id IS DISTINCT FROM OLD.dispatch_id) THEN "
                "UPDATE " + log_table_ + " SET ended_at = clock_timestamp(), "
                "end_status = NEW.status, end_error = NEW.last_error "
                "WHERE dispatch_id = OLD.dispatch_id; END IF; "
                "IF NEW.status = 'dispatched' AND (TG_OP = 'INSERT' "
                "OR OLD.status <> 'dispatched' "
                "OR NEW.dispatch_id IS DISTINCT FROM OLD.dispatch_id) THEN "
                "INSERT INTO " + log_table_ + " VALUES (NEW.dispatch_id, NEW.id, "
                "NEW.queue, NEW.coalesce_key, current_setting('application_name'), "
                "clock_timestamp()) ON CONFLICT (dispatch_id) DO NOTHING; END IF; "
                "RETURN NULL; END $$");
  must_exec(db, "CREATE TRIGGER " + log_function_ + "_trg AFTER UPDATE ON "
                  + names.deliveries
                  + " FOR EACH ROW WHEN (OLD.status = 'dispatched' OR "
                    "NEW.status = 'dispatched') EXECUTE FUNCTION "
                  + log_function_ + "()");
  must_exec(db, "CREATE TRIGGER " + log_function_ + "_ins AFTER INSERT ON "
                  + names.deliveries
                  + " FOR EACH ROW WHEN (NEW.status = 'dispatched') EXECUTE FUNCTION "
                  + log_function_ + "()");
  must_exec(db, "CREATE TRIGGER " + log_function_ + "_del AFTER DELETE ON "
                  + names.deliveries
                  + " FOR EACH ROW WHEN (OLD.status = 'dispatched') EXECUTE FUNCTION "
                  + log_function_ + "()");
}

void ordering_cluster::start_node(const std::string& name) {
  nodes[name] = std::make_unique<child_process>(
    OUTBOXD_PATH,
    std::vector<std::string>{"--config", config_path_, "--roles",
                             "router,sweeper,dispatcher,results"},
    dir + name + ".log", std::vector<std::string>{"PGAPPNAME=" + name});
}

void ordering_cluster::start_workers(const std::string& queue, int n) {
  for (int i = 0; i < n; ++i) {
    auto tag = std::to_string(workers_.size());
    auto journal = dir + "journal-" + tag;
    journals_[queue].push_back(journal);
    workers_.push_back(std::make_unique<child_process>(
      ORDERING_WORKER_PATH,
      std::vector<std::string>{
        "--config", config_path_, "--queue", queue, "--journal", journal,
        "--fail-percent", "10", "--sleep-percent", "2", "--sleep-ms",
        std::to_string((timeout_seconds + 1) * 1000), "--seed",
        std::to_string(1000 + workers_.size())},
      dir + "worker-" + tag + ".log"));
  }
}

std::vector<std::string> ordering_cluster::journals(const std::string& queue) const {
  auto it = journals_.find(queue);
  return it == journals_.end() ? std::vector<std::string>{} : it->second;
}

void ordering_cluster::start_producers(int events, int keys, int per_second,
                                       int producers) {
  for (int i = 0; i < producers; ++i) {
    int share = events / producers + (i < events % producers ? 1 : 0);
    producers_.emplace_back([=] { produce(i, share, keys, per_second / producers); });
  }
}

producer_report ordering_cluster::wait_producers() {
  for (auto& t : producers_)
    t.join();
  producers_.clear();
  std::lock_guard<std::mutex> guard{publish_mtx_};
  report_.overtaken = 0;
  for (auto& [key, tickets] : commit_ticket_)
    for (auto it = std::next(tickets.begin()); it != tickets.end(); ++it)
      report_.overtaken += it->second < std::prev(it)->second;
  return report_;
}

// One producer: transactions of 1 to 8 events of random keys, paced, each
// kept open while its events go in, so that the two producers'
// transactions overlap and a later event's transaction often commits
// first. A key's next seq is taken and its event inserted under one lock:
// seq order is id order, the order the ordered route must keep.
void ordering_cluster::produce(int index, int events, int keys, int per_second) {
  auto conn = pg_connection::connect(url_);
  std::mt19937 rng{static_cast<unsigned>(7 + index)};
  std::uniform_int_distribution<int> pick_key{0, keys - 1}, pick_size{1, 8};
  auto sql = "SELECT " + names.publish_function + "('e', $1, $2)";
  auto start = std::chrono::steady_clock::now();
  auto fail = [&] {
    std::lock_guard<std::mutex> guard{publish_mtx_};
    report_.ok = false;
  };
  for (int i = 0; i < events && !stop_;) {
    if (!conn || conn->exec_script("begin", "BEGIN"))
      return fail();
    std::vector<std::pair<std::string, int64_t>> mine;
    for (int n = pick_size(rng); n > 0 && i < events; --n, ++i) {
      std::this_thread::sleep_until(
        start + std::chrono::microseconds{int64_t{1000000} * i / per_second});
      char key[8];
      std::snprintf(key, sizeof key, "k%02d", pick_key(rng));
      std::lock_guard<std::mutex> guard{publish_mtx_};
      auto seq = ++report_.per_key[key];
      auto payload = "{\"key\": \"" + std::string{key} + "\", \"seq\": "
                     + std::to_string(seq) + "}";
      if (!conn->exec("publish", sql, {payload, std::string{key}})) {
        report_.ok = false;
        return;
      }
      ++report_.events;
      mine.emplace_back(key, seq);
    }
    if (conn->exec_script("commit", "COMMIT"))
      return fail();
    auto ticket = ++commits_;
    std::lock_guard<std::mutex> guard{publish_mtx_};
    ++report_.transactions;
    for (auto& [key, seq] : mine)
      commit_ticket_[key][seq] = ticket;
  }
}

bool ordering_cluster::all_final(int64_t events) {
  auto rows = must_exec(db, "SELECT count(*), count(*) FILTER (WHERE status "
                            "IN ('pending', 'dispatched')) FROM "
                              + all_deliveries(names) + " d");
  return rows.int64(0, 0) == 2 * events && rows.int64(0, 1) == 0;
}

std::vector<relay_dispatch> ordering_cluster::dispatches(const std::string& queue) {
  auto rows = must_exec(
    db, "SELECT dispatch_id::text, delivery_id, COALESCE(key, ''), "
        "COALESCE(node, ''), " + micros("started_at") + ", "
        + micros("ended_at") + ", COALESCE(end_status, ''), "
        "COALESCE(end_error, '') FROM " + log_table_ + " WHERE queue = $1",
    {queue});
  std::vector<relay_dispatch> out;
  for (int i = 0; i < rows.size(); ++i) {
    relay_dispatch d;
    d.dispatch_id = rows.text(i, 0);
    d.delivery_id = rows.int64(i, 1);
    d.key = rows.text(i, 2);
    d.node = rows.text(i, 3);
    d.start_us = rows.int64(i, 4);
    if (!rows.is_null(i, 5))
      d.end_us = rows.int64(i, 5);
    d.end_status = rows.text(i, 6);
    d.end_error = rows.text(i, 7);
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<ordering_cluster::completed_row>
ordering_cluster::completed(const std::string& queue) {
  // When the relay applied it: the end of its dispatch in the log (the
  // row's update or delete), else completed_at (the transaction's start).
  // Those in the completion log (schema/016) find their dispatch by the
  // one that ended completed.
  auto rows = must_exec(
    db, "SELECT COALESCE(d.dispatch_id::text, ''), COALESCE(d.coalesce_key, ''), "
        "(e.payload::jsonb ->> 'seq')::bigint, "
          + micros("COALESCE(l.ended_at, d.completed_at)") + " FROM "
          + names.deliveries + " d JOIN " + names.events
          + " e ON e.id = d.event_id LEFT JOIN " + log_table_
          + " l ON l.dispatch_id = d.dispatch_id"
            " WHERE d.queue = $1 AND d.status = 'completed'"
            " UNION ALL SELECT COALESCE(l.dispatch_id::text, ''),"
            " COALESCE(e.key, ''), (e.payload::jsonb ->> 'seq')::bigint, "
          + micros("COALESCE(l.ended_at, c.completed_at)") + " FROM "
          + names.deliveries + "_completed c JOIN " + names.events
          + " e ON e.id = c.event_id LEFT JOIN " + log_table_
          + " l ON l.delivery_id = c.id AND l.end_status = 'completed'"
            " WHERE c.queue = $1",
    {queue});
  std::vector<completed_row> out;
  for (int i = 0; i < rows.size(); ++i)
    out.push_back({rows.text(i, 0), rows.text(i, 1), rows.int64(i, 2),
                   rows.int64(i, 3)});
  return out;
}

} // namespace outbox::testing
