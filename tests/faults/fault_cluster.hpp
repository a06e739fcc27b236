// The cluster the fault tests drive: three outboxd processes (status;
// router+sweeper; dispatcher+results) over the fixture's tables, a
// fault_worker per queue, events published at a steady rate, and the
// verdict every scenario checks: every delivery final, none lost, none
// failed that a worker completed, resends under 1%.
#pragma once

#include <optional>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <caf/test/unit_test.hpp>

#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"

namespace outbox::testing {

struct fault_verdict {
  int64_t expected = 0;  ///< deliveries the events asked for
  int64_t deliveries = 0;
  int64_t completed = 0;
  int64_t failed = 0;
  int64_t open = 0;      ///< not final yet
  int64_t failed_but_ran = 0; ///< failed although a worker completed it
  int64_t runs = 0;      ///< job runs the workers journaled
  int64_t resent = 0;    ///< runs beyond one per delivery that ran
  /// Deliveries with an attempt counted against them (a timeout, say),
  /// also those whose first send never reached a worker (expired in the
  /// broker), which `resent` does not see.
  int64_t sent_again = 0;
  double recovery_seconds = 0;
};

class fault_cluster : public cluster_fixture {
public:
  /// Routes of event "e": job J on queue `jobs` and job K on queue `mail`,
  /// each with `retry_delays` (JSON list) and `timeout_seconds`;
  /// `max_in_flight` > 0 sets the config's maxInFlight (0: its default).
  explicit fault_cluster(std::string retry_delays = "[1, 1]",
                         int timeout_seconds = 5, int max_in_flight = 0);
  ~fault_cluster();

  std::string jobs_queue, mail_queue;
  std::string dir;
  /// Flags every node gets besides its role's (TLS, say), and those the
  /// status node gets besides (--http, say): set before starting them.
  std::vector<std::string> node_args, status_args;
  /// The roles of the router node and of the dispatcher node.
  std::string router_roles = "router,sweeper";
  std::string dispatcher_roles = "dispatcher,results";

  void start_status_node();
  void start_router_node();
  void start_dispatcher_node();
  void start_all();
  /// A fault_worker per queue, each job taking `job_ms`, and `slow_job_ms`
  /// once slow_down_workers() told it so.
  void start_workers(int job_ms = 0, int prefetch = 10, int slow_job_ms = 0);
  /// Every running worker takes its `slow_job_ms` a job from now on.
  void slow_down_workers();

  std::unique_ptr<child_process> status_node, router_node, dispatcher_node;
  std::vector<std::unique_ptr<child_process>> workers;

  /// Publishes `n` events of type "e" at `per_second` on a thread of its
  /// own (0: as fast as it can); wait_published() joins it.
  void publish_in_background(int n, int per_second);
  void wait_published();

  /// Publishes events of type "e" at `per_second` on a thread of its own
  /// until stop_publishing() (settle() stops it too). A scenario drives its
  /// fault with it: events keep coming for as long as the fault takes to
  /// be in effect, however slow the machine, instead of for a fixed time.
  void keep_publishing(int per_second);
  void stop_publishing();

  /// Events published so far (committed and acknowledged).
  int64_t published() const { return published_; }

  /// Waits until no delivery is open (or `limit` passes), then judges.
  fault_verdict settle(std::chrono::seconds limit = std::chrono::seconds{120});

  /// The config's batchSize: the most one claim takes.
  static constexpr int claim_batch = 50;

  /// Checks the verdict every scenario must meet, and reports it.
  /// The common verdict; resends stay under 1% of the deliveries, or at most
  /// `max_resent` when the scenario knows exactly which ones may come again.
  void check(const std::string& scenario, const fault_verdict& v,
             std::optional<int64_t> max_resent = std::nullopt);

  /// Median seconds from an event's commit to its delivery's completion,
  /// over the deliveries completed since `since_id` (an event id).
  double completion_p50(int64_t since_event_id);

  /// The `fraction` percentile (0.99, say) of those seconds over the
  /// completed deliveries of the events after `after_id` up to `upto_id`.
  double completion_percentile(double fraction, int64_t after_id, int64_t upto_id);

  /// The newest event id (0 if none).
  int64_t last_event_id();

  /// A gauge of an actor as the status node shows it (`outboxctl status
  /// --json`), e.g. gauge("dispatcher " + jobs_queue, "in_flight_window");
  /// the largest when several nodes run an actor of that name; nullopt
  /// while the status node does not show it.
  std::optional<int64_t> gauge(const std::string& actor, const std::string& name);

  /// Job runs the workers of job `job` ("J" or "K") journaled so far.
  int64_t runs_of(const std::string& job);

  /// Passes an actor made, as the status node shows it (the most when
  /// several nodes run an actor of that name); nullopt while not shown.
  std::optional<int64_t> passes(const std::string& actor);

  /// Runs `outboxctl ARGS --config <this cluster's config>`: exit code and
  /// standard output.
  std::pair<int, std::string> outboxctl(const std::string& args);

  const std::string& status_port() const { return status_port_; }

  /// Lines of a node's log that are warnings or errors.
  int warning_lines(const std::string& node);

  /// Lines of a node's log that contain `text`.
  int lines_with(const std::string& node, const std::string& text);

private:
  std::unique_ptr<child_process> start_node(const std::string& name,
                                            std::vector<std::string> args);
  std::string config_path_;
  std::string status_port_;
  // Publishes up to `n` events (or until stop_ when n < 0).
  void publish_loop(int64_t n, int per_second);

  std::thread publisher_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> abort_{false}; ///< ends any publisher (the destructor)
  std::atomic<int64_t> published_{0};
};

} // namespace outbox::testing
