// A key blocked by `onFailure: block` on a real cluster: three outboxd
// processes and a worker that fails one marked job for good. The block is
// in the database, so it outlasts a restart of every node; `outboxctl
// skip` lets the rest of the key go, in order.
#define CAF_SUITE integration.ordering_block_restart
#include <caf/test/unit_test.hpp>

#include <algorithm>
#include <mutex>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/running_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct restart_fixture : cluster_fixture {
  std::string q = queue("ordered");
  std::string dir = "/tmp/" + queue_prefix;
  std::string config_path = dir + "outbox.json";
  std::string port = std::to_string(free_port());
  std::unique_ptr<child_process> status_node, router_node, dispatcher_node;
  std::mutex m;
  std::vector<int64_t> completed; ///< events the worker completed, in order

  restart_fixture() {
    write_config_file(config_path,
                      "{\"e\": [{\"job\": \"J\", \"queue\": \"" + q
                        + "\", \"retryDelaysSeconds\": [],"
                          " \"merge\": \"none\", \"ordering\": \"key\","
                          " \"onFailure\": \"block\"}]}",
                      50);
  }

  ~restart_fixture() {
    dispatcher_node.reset(); // stops each
    router_node.reset();
    status_node.reset();
    std::string cmd = "rm -f " + dir + "*.log " + config_path;
    [[maybe_unused]] auto rc = std::system(cmd.c_str());
  }

  std::unique_ptr<child_process> start(const std::string& name,
                                       std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path});
    return std::make_unique<child_process>(OUTBOXD_PATH, args,
                                           dir + name + ".log");
  }

  void start_cluster() {
    status_node = start("status", {"--roles", "status", "--listen", "127.0.0.1:" + port});
    router_node = start("router", {"--roles=router,sweeper", "--join",
                                   "127.0.0.1:" + port, "--sleep", "1"});
    dispatcher_node = start("dispatcher", {"--roles", "dispatcher,results", "--queues",
                                           q, "--join=127.0.0.1:" + port,
                                           "--sleep=1"});
  }

  void stop_cluster() {
    for (auto* n : {&dispatcher_node, &router_node, &status_node})
      if (*n) {
        CAF_CHECK_EQUAL((*n)->stop(), 0);
        n->reset();
      }
  }

  /// The worker: fails for good a job whose payload has "fail", completes
  /// the others and notes their events.
  handler_map handlers() {
    return {{"J", [this](const job_context& ctx) {
               if (ctx.payload_json.find("fail") != std::string::npos)
                 throw job_failed("marked to fail");
               std::lock_guard<std::mutex> guard{m};
               completed.push_back(ctx.event_id);
             }}};
  }

  int64_t publish_n(const std::string& key, int n, bool fail = false) {
    return publish("e", "{\"k\": \"" + key + "\", \"n\": " + std::to_string(n)
                          + (fail ? ", \"fail\": true" : "") + "}",
                   key);
  }

  std::string status_of_event(int64_t event_id) {
    auto rows = must_exec(db, "SELECT status FROM " + names.deliveries
                                + " WHERE event_id = $1",
                          {std::to_string(event_id)});
    return rows.size() == 0 ? "" : rows.text(0, 0);
  }

  bool completed_event(int64_t event_id) {
    return status_of_event(event_id) == "completed";
  }

  /// The events among `of` the worker completed, in the order it did.
  std::vector<int64_t> completed_of(const std::vector<int64_t>& of) {
    std::lock_guard<std::mutex> guard{m};
    std::vector<int64_t> out;
    for (auto id : completed)
      if (std::find(of.begin(), of.end(), id) != of.end())
        out.push_back(id);
    return out;
  }

  std::pair<int, std::string> ctl(const std::string& args) {
    return run_command("env -u OUTBOX_DATABASE_URL " + std::string{OUTBOXCTL_PATH}
                       + " " + args + " --config " + config_path);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(ordering_block_restart_tests, restart_fixture)

CAF_TEST(a blocked key stays blocked across a restart and resumes after skip) {
  start_cluster();
  running_worker worker{q, handlers()};
  auto a0 = publish_n("A", 0);
  auto a1 = publish_n("A", 1, true);
  auto a2 = publish_n("A", 2);
  auto a3 = publish_n("A", 3);
  auto b0 = publish_n("B", 0);
  CAF_REQUIRE(wait_until([&] {
    return status_of_event(a1) == "failed" && completed_event(b0);
  }, std::chrono::seconds{60}));
  CAF_CHECK(completed_event(a0));
  CAF_CHECK_EQUAL(status_of_event(a2), "pending");
  // Every node stops, and comes back.
  stop_cluster();
  start_cluster();
  // A marker of another key goes through the restarted cluster: it runs,
  // and A's later deliveries had every chance to go.
  auto c0 = publish_n("C", 0);
  CAF_REQUIRE(wait_until([&] { return completed_event(c0); },
                         std::chrono::seconds{60}));
  CAF_CHECK_EQUAL(status_of_event(a2), "pending");
  CAF_CHECK_EQUAL(status_of_event(a3), "pending");
  std::vector<int64_t> key_a{a0, a1, a2, a3};
  CAF_CHECK_EQUAL(completed_of(key_a), (std::vector<int64_t>{a0}));
  auto head = std::to_string(
    must_exec(db, "SELECT id FROM " + names.deliveries + " WHERE event_id = $1",
              {std::to_string(a1)})
      .int64(0, 0));
  auto blocked = ctl("blocked");
  check_ends(blocked, 0, "blocked by delivery " + head);
  CAF_CHECK_NOT_EQUAL(blocked.second.find("waiting behind it: 2 deliveries"),
                      std::string::npos);
  check_ends(ctl("skip " + head), 0, "delivery " + head + ": skipped (was failed");
  CAF_REQUIRE(wait_until([&] { return completed_event(a3); },
                         std::chrono::seconds{60}));
  CAF_CHECK_EQUAL(completed_of(key_a), (std::vector<int64_t>{a0, a2, a3}));
  CAF_CHECK_EQUAL(status_of_event(a1), "failed");
  check_ends(ctl("blocked"), 0, "no blocked keys");
}

CAF_TEST_FIXTURE_SCOPE_END()
