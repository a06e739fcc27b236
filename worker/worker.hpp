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
// A handler registered with the worker's inbox (worker/inbox.hpp) runs in
// a transaction on the worker's own database that records the job first:
// its effects happen once per delivery, however often the job arrives.
//
// Handlers run one at a time on a helper thread of the worker, while the
// thread of run() keeps both broker connections alive (heartbeats): a long
// handler neither loses the connection nor gets its job run twice.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>
#include <string>

#include <caf/error.hpp>

#include "core/amqp/amqp_session.hpp"
#include "core/config/config.hpp"
#include "worker/helper_thread.hpp"
#include "worker/inbox.hpp"
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

/// A handler that runs in the inbox's transaction: its writes through
/// `tx` commit together with the job's record (worker::use_inbox).
using inbox_handler = std::function<void(const job_context&, pg_connection& tx)>;

struct worker_counters {
  int64_t completed = 0, retried = 0, failed = 0;
  int64_t malformed = 0; ///< not valid job messages
  int64_t direct = 0;    ///< direct jobs run (no result sent)
  int64_t repeats = 0;   ///< inbox jobs already recorded: not run again
  int64_t requeued = 0;  ///< jobs put back while the inbox was unreachable
  int64_t pruned = 0;    ///< inbox records removed after their time
  /// Jobs of ordered routes not started because their outboxExpiresAt had
  /// passed (answered `retry`; docs/ordering.md "A late send").
  int64_t expired = 0;
};

class worker {
public:
  explicit worker(worker_options opts);

  /// Registers the handler of one job (replacing an earlier one).
  void handle(const std::string& job, job_handler handler);

  /// Registers a handler that runs in the inbox's transaction; needs
  /// use_inbox() before run().
  void handle(const std::string& job, inbox_handler handler);

  /// The inbox for the handlers registered with a transaction. While its
  /// database cannot be reached the worker takes no jobs: the job at hand
  /// goes back to the queue unanswered (no attempt is charged for it) and
  /// the worker waits for the database. It prunes old records itself,
  /// every minute, but only once it has seen its queue empty since it
  /// started: what waited while it was down is handled first.
  void use_inbox(inbox ib);

  /// Called on the handler's thread after an inbox job's transaction
  /// committed and before its result is sent (tests; a user's metrics).
  void after_commit(std::function<void(int64_t delivery_id)> hook) {
    after_commit_ = std::move(hook);
  }

  /// errc::config_invalid naming every job the config routes to this
  /// worker's queue without a handler here, or an inbox handler without an
  /// inbox.
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
  /// Or put it back unanswered (requeue: the inbox is unreachable).
  struct decision {
    enum { send, ack, requeue } action = ack;
    send_result result;
  };
  decision decide(const incoming_message& m);
  /// Answers a job past its outboxExpiresAt `retry` without running it.
  decision refuse_expired(const job_message_fields& job);
  /// Runs an inbox job; nullopt when it must go back to the queue.
  std::optional<send_result> run_in_inbox(const job_message_fields& job,
                                          const inbox_handler& handler);
  /// While the inbox is unreachable: waits for it (false: not yet).
  bool inbox_back();
  /// Prunes the inbox when it is time and the queue was seen empty.
  void prune_inbox();
  /// Runs a batch, publishes its results with confirms, then acks.
  void process(const std::vector<incoming_message>& batch);
  /// The next job: one read while a handler ran, else from the consumer.
  caf::expected<std::optional<incoming_message>> next_job(std::chrono::milliseconds wait);
  /// Sends due heartbeats on both connections and reads what arrived.
  void keep_alive();

  worker_options opts_;
  handler_map handlers_;
  std::map<std::string, inbox_handler> inbox_handlers_;
  std::optional<inbox> inbox_;
  std::function<void(int64_t)> after_commit_;
  bool inbox_down_ = false;  ///< found unreachable: take no jobs
  bool seen_empty_ = false;  ///< the queue was empty once since start
  std::chrono::steady_clock::time_point last_prune_{};
  std::atomic<bool> stop_{false};
  worker_counters counters_;
  amqp_session consumer_;  ///< consumes the queue
  amqp_session publisher_; ///< publishes the results
  std::deque<incoming_message> backlog_; ///< delivered while a handler ran
  helper_thread handler_thread_;
};

} // namespace outbox
