// The C++ worker: consumes one queue's job messages, runs the handler
// registered for each job, publishes the results to `<queue>.results` with
// publisher confirms (the results of the jobs already waiting, up to the
// prefetch, as one result message) and only then acks each job.
//
// Delivery is at least once: if the worker dies after the handler ran but
// before the ack, RabbitMQ hands the job to another worker, which runs it
// again. Handlers use delivery_id (stable over retries) or dispatch_id (one
// per send) to make a repeat harmless. A failed job is never requeued:
// retries belong to the outbox.
//
// Handlers run one at a time on a helper thread of the worker, while the
// thread of run() keeps both broker connections alive (heartbeats): a long
// handler neither loses the connection nor gets its job run twice.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>
#include <string>

#include <caf/error.hpp>

#include "core/amqp/amqp_session.hpp"
#include "core/config/config.hpp"
#include "worker/helper_thread.hpp"
#include "worker/job_runner.hpp"

namespace outbox {

struct worker_options {
  /// One URL or a broker list (core/amqp/amqp_url_list.hpp): the worker
  /// fails over to the next broker when its connection is lost.
  std::string amqp_url;
  std::string queue;
  uint16_t prefetch = 10; ///< unacked jobs this worker holds at most
  /// The type the queue and its results queue are declared with: the
  /// relay's (config::queue_type_of), or the declaration is refused.
  queue_type type = queue_type::classic;
};

struct worker_counters {
  int64_t completed = 0, retried = 0, failed = 0;
  int64_t malformed = 0; ///< not valid job messages
  int64_t direct = 0;    ///< direct jobs run (no result sent)
};

class worker {
public:
  explicit worker(worker_options opts);

  /// Registers the handler of one job (replacing an earlier one).
  void handle(const std::string& job, job_handler handler);

  /// errc::config_invalid naming every job the config routes to this
  /// worker's queue without a handler here.
  caf::error check_routes(const config& cfg) const;

  /// Runs until stop() (or `max_jobs` jobs, when positive), reconnecting
  /// with backoff when the broker goes away. Never throws on input.
  void run(int64_t max_jobs = 0);

  /// Asks run() to return after the current job (any thread, signals too).
  void stop() { stop_ = true; }

  const worker_counters& counters() const { return counters_; }

private:
  /// Drops both connections and opens both again.
  caf::error connect();
  /// What to do with one message: send `result` and then ack; or just ack
  /// (a direct job: nobody waits for its result; an unreadable message that
  /// names no delivery).
  struct decision {
    enum { send, ack } action = ack;
    send_result result;
  };
  decision decide(const incoming_message& m);
  /// Runs a batch, publishes its results with confirms, then acks.
  void process(const std::vector<incoming_message>& batch);
  /// The next job: one read while a handler ran, else from the consumer.
  caf::expected<std::optional<incoming_message>> next_job(std::chrono::milliseconds wait);
  /// Sends due heartbeats on both connections and reads what arrived.
  void keep_alive();

  worker_options opts_;
  handler_map handlers_;
  std::atomic<bool> stop_{false};
  worker_counters counters_;
  amqp_session consumer_;  ///< consumes the queue
  amqp_session publisher_; ///< publishes the results
  std::deque<incoming_message> backlog_; ///< delivered while a handler ran
  helper_thread handler_thread_;
};

} // namespace outbox
