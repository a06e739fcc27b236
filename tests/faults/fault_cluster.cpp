#include "tests/faults/fault_cluster.hpp"

#include <functional>

#include <csignal>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <caf/test/unit_test.hpp>
#include <rapidjson/document.h>

namespace outbox::testing {

namespace {

using clock_type = std::chrono::steady_clock;

std::map<int64_t, int64_t> read_journal(const std::string& path) {
  std::map<int64_t, int64_t> runs;
  std::ifstream in{path};
  int64_t id = 0;
  while (in >> id)
    ++runs[id];
  return runs;
}

std::string route_json(const std::string& job, const std::string& queue,
                       const std::string& delays, int timeout) {
  return "{\"job\": \"" + job + "\", \"queue\": \"" + queue
         + "\", \"retryDelaysSeconds\": " + delays
         + ", \"deliveryTimeoutSeconds\": " + std::to_string(timeout) + "}";
}

} // namespace

fault_cluster::fault_cluster(std::string retry_delays, int timeout_seconds,
                             int max_in_flight)
  : jobs_queue(queue("jobs")),
    mail_queue(queue("mail")),
    dir("/tmp/" + queue_prefix + "faults/"),
    config_path_(dir + "outbox.json"),
    status_port_(std::to_string(free_port())) {
  std::string cmd = "mkdir -p " + dir;
  CAF_REQUIRE_EQUAL(std::system(cmd.c_str()), 0);
  write_config_file(config_path_,
                    "{\"e\": [" + route_json("J", jobs_queue, retry_delays,
                                             timeout_seconds)
                      + ", "
                      + route_json("K", mail_queue, retry_delays,
                                   timeout_seconds)
                      + "]}",
                    claim_batch,
                    max_in_flight > 0 ? "\"maxInFlight\": "
                                          + std::to_string(max_in_flight) + ", "
                                      : "");
}

fault_cluster::~fault_cluster() {
  // Also a bounded publisher, which may be retrying against a database a
  // failed check left stopped.
  abort_ = true;
  stop_publishing();
  workers.clear();
  dispatcher_node.reset();
  router_node.reset();
  status_node.reset();
  std::string cmd = "rm -rf " + dir;
  [[maybe_unused]] auto rc = std::system(cmd.c_str());
}

std::unique_ptr<child_process>
fault_cluster::start_node(const std::string& name, std::vector<std::string> args) {
  args.insert(args.begin(), {"--config", config_path_});
  args.insert(args.end(), node_args.begin(), node_args.end());
  return std::make_unique<child_process>(OUTBOXD_PATH, args, dir + name + ".log");
}

void fault_cluster::start_status_node() {
  std::vector<std::string> args{"--roles", "status", "--listen",
                                "127.0.0.1:" + status_port_};
  args.insert(args.end(), status_args.begin(), status_args.end());
  status_node = start_node("status", args);
}

void fault_cluster::start_router_node() {
  router_node = start_node("router", {"--roles", router_roles, "--join",
                                      "127.0.0.1:" + status_port_});
}

void fault_cluster::start_dispatcher_node() {
  dispatcher_node = start_node("dispatcher",
                               {"--roles", dispatcher_roles, "--join",
                                "127.0.0.1:" + status_port_});
}

void fault_cluster::start_all() {
  start_status_node();
  start_router_node();
  start_dispatcher_node();
}

void fault_cluster::start_workers(int job_ms, int prefetch, int slow_job_ms) {
  for (auto [q, job] : {std::pair{jobs_queue, "J"}, std::pair{mail_queue, "K"}}) {
    auto n = std::to_string(workers.size());
    workers.push_back(std::make_unique<child_process>(
      FAULT_WORKER_PATH,
      std::vector<std::string>{"--config", config_path_, "--queue", q, "--job",
                               job, "--journal", dir + "journal-" + n,
                               "--job-ms", std::to_string(job_ms),
                               "--prefetch", std::to_string(prefetch),
                               "--slow-job-ms", std::to_string(slow_job_ms)},
      dir + "worker-" + n + ".log"));
  }
}

void fault_cluster::slow_down_workers() {
  for (auto& w : workers)
    w->signal(SIGUSR1);
}

void fault_cluster::publish_in_background(int n, int per_second) {
  wait_published();
  publisher_ = std::thread{[this, n, per_second] { publish_loop(n, per_second); }};
}

void fault_cluster::keep_publishing(int per_second) {
  wait_published();
  publisher_ = std::thread{[this, per_second] { publish_loop(-1, per_second); }};
}

void fault_cluster::stop_publishing() {
  stop_ = true;
  wait_published();
}

void fault_cluster::publish_loop(int64_t n, int per_second) {
  std::optional<pg_connection> conn;
  auto start = clock_type::now();
  auto url = database_url();
  auto sql = "SELECT " + names.publish_function + "('e', $1)";
  for (int64_t i = 0; !abort_ && (n < 0 ? !stop_ : i < n);) {
    if (per_second > 0)
      std::this_thread::sleep_until(
        start + std::chrono::microseconds{int64_t{1000000} * i / per_second});
    if (!conn || !conn->ok()) {
      conn.reset();
      if (auto c = pg_connection::connect(url))
        conn.emplace(std::move(*c));
    }
    // The scenario may have stopped the database: try again shortly.
    if (!conn || !conn->exec("publish", sql, {"{\"n\":" + std::to_string(i) + "}"})) {
      conn.reset();
      std::this_thread::sleep_for(std::chrono::milliseconds{100});
      continue;
    }
    ++i;
    ++published_;
  }
}

void fault_cluster::wait_published() {
  if (publisher_.joinable())
    publisher_.join();
  stop_ = false;
}

fault_verdict fault_cluster::settle(std::chrono::seconds limit) {
  stop_publishing();
  fault_verdict v;
  // What the database holds: a commit whose reply a stopped server never
  // sent counts there, though the publisher tried again. Every publish
  // that was acknowledged must be among them.
  auto events = must_exec(db, "SELECT count(*) FROM " + names.events
                                + " WHERE event_type = 'e'").int64(0, 0);
  CAF_CHECK_GREATER_OR_EQUAL(events, published_.load());
  v.expected = events * 2;
  auto start = clock_type::now();
  auto all_final = [&] {
    auto rows = must_exec(db, "SELECT count(*), count(*) FILTER (WHERE status "
                              "IN ('pending', 'dispatched')) FROM "
                                + all_deliveries(names) + " d");
    return rows.int64(0, 0) == v.expected && rows.int64(0, 1) == 0;
  };
  wait_until(all_final, limit);
  v.recovery_seconds =
    std::chrono::duration<double>(clock_type::now() - start).count();
  v.deliveries = must_exec(db, "SELECT count(*) FROM " + all_deliveries(names) + " d")
                   .int64(0, 0);
  v.completed = count_status("completed");
  v.failed = count_status("failed");
  v.open = count_status("pending") + count_status("dispatched");
  v.sent_again = must_exec(db, "SELECT count(*) FROM " + all_deliveries(names)
                                 + " d WHERE attempts > 0").int64(0, 0);
  std::map<int64_t, int64_t> runs;
  for (size_t i = 0; i < workers.size(); ++i)
    for (auto [id, n] : read_journal(dir + "journal-" + std::to_string(i)))
      runs[id] += n;
  auto failed = must_exec(db, "SELECT id FROM " + names.deliveries
                                + " WHERE status = 'failed'");
  for (int i = 0; i < failed.size(); ++i)
    v.failed_but_ran += runs.count(failed.int64(i, 0));
  for (auto [id, n] : runs) {
    v.runs += n;
    v.resent += n - 1;
  }
  return v;
}

void fault_cluster::check(const std::string& scenario, const fault_verdict& v,
                          std::optional<int64_t> max_resent) {
  CAF_MESSAGE("scenario " << scenario << ": expected " << v.expected
                          << ", completed " << v.completed << ", failed "
                          << v.failed << ", open " << v.open << ", resent "
                          << v.resent << ", sent again " << v.sent_again
                          << ", recovery " << v.recovery_seconds
                          << " s");
  CAF_CHECK_EQUAL(v.deliveries, v.expected); // none lost
  CAF_CHECK_EQUAL(v.open, 0);                 // every one final
  CAF_CHECK_EQUAL(v.failed_but_ran, 0);
  CAF_CHECK_EQUAL(v.failed, 0); // the workers complete every job
  if (max_resent)
    CAF_CHECK_LESS_OR_EQUAL(v.resent, *max_resent);
  else
    CAF_CHECK_LESS(v.resent * 100, v.expected); // under 1%
}

double fault_cluster::completion_p50(int64_t since_event_id) {
  return completion_percentile(0.5, since_event_id, INT64_MAX);
}

double fault_cluster::completion_percentile(double fraction, int64_t after_id,
                                            int64_t upto_id) {
  auto rows = must_exec(
    db, "SELECT COALESCE(percentile_cont($1::float8) WITHIN GROUP (ORDER BY "
        "extract(epoch FROM d.completed_at - e.created_at)), 0) FROM "
          + all_deliveries(names) + " d JOIN " + names.events
          + " e ON e.id = d.event_id WHERE d.status = 'completed' AND e.id > $2"
            " AND e.id <= $3",
    {std::to_string(fraction), std::to_string(after_id), std::to_string(upto_id)});
  return std::stod(rows.text(0, 0));
}

int64_t fault_cluster::last_event_id() {
  return must_exec(db, "SELECT COALESCE(max(id), 0) FROM " + names.events)
    .int64(0, 0);
}

int fault_cluster::warning_lines(const std::string& node) {
  std::ifstream in{dir + node + ".log"};
  std::string line;
  int n = 0;
  while (std::getline(in, line))
    if (line.find("level=warning") != std::string::npos
        || line.find("level=error") != std::string::npos)
      ++n;
  return n;
}

int fault_cluster::lines_with(const std::string& node, const std::string& text) {
  std::ifstream in{dir + node + ".log"};
  std::string line;
  int n = 0;
  while (std::getline(in, line))
    n += line.find(text) != std::string::npos;
  return n;
}

namespace {

// The actors the status node shows, as `outboxctl status --json` prints
// them: each actor object named `actor` goes to `seen`.
void for_each_actor(const std::string& status_port, const std::string& actor,
                    const std::function<void(const rapidjson::Value&)>& seen) {
  auto [rc, out] = run_command(std::string{OUTBOXCTL_PATH} + " status --json "
                               "--connect 127.0.0.1:" + status_port);
  rapidjson::Document doc;
  if (rc != 0 || doc.Parse(out.c_str()).HasParseError() || !doc.IsObject()
      || !doc.HasMember("nodes") || !doc["nodes"].IsArray())
    return;
  for (auto& node : doc["nodes"].GetArray()) {
    if (!node.IsObject() || !node.HasMember("actors") || !node["actors"].IsArray())
      continue;
    for (auto& a : node["actors"].GetArray())
      if (a.IsObject() && a.HasMember("name") && a["name"].IsString()
          && actor == a["name"].GetString())
        seen(a);
  }
}

} // namespace

std::optional<int64_t> fault_cluster::gauge(const std::string& actor,
                                            const std::string& name) {
  std::optional<int64_t> best;
  for_each_actor(status_port_, actor, [&](const rapidjson::Value& a) {
    if (a.HasMember("gauges") && a["gauges"].IsObject()
        && a["gauges"].HasMember(name.c_str())
        && a["gauges"][name.c_str()].IsInt64())
      best = std::max(best.value_or(INT64_MIN), a["gauges"][name.c_str()].GetInt64());
  });
  return best;
}

std::optional<int64_t> fault_cluster::passes(const std::string& actor) {
  std::optional<int64_t> best;
  for_each_actor(status_port_, actor, [&](const rapidjson::Value& a) {
    if (a.HasMember("passes") && a["passes"].IsInt64())
      best = std::max(best.value_or(INT64_MIN), a["passes"].GetInt64());
  });
  return best;
}

int64_t fault_cluster::runs_of(const std::string& job) {
  // start_workers starts a J worker, then a K one, each time.
  int64_t n = 0;
  for (size_t i = job == "J" ? 0 : 1; i < workers.size(); i += 2)
    for (auto [id, k] : read_journal(dir + "journal-" + std::to_string(i)))
      n += k;
  return n;
}

std::pair<int, std::string> fault_cluster::outboxctl(const std::string& args) {
  return run_command(std::string{OUTBOXCTL_PATH} + " " + args + " --config "
                     + config_path_);
}

} // namespace outbox::testing
