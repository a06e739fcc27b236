// A worker inside the tests that follows the wire contract: it consumes a
// queue's job messages, records what it saw, answers each as its policy
// says on `<queue>.results` (with a confirm), then acks the job.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace outbox::testing {

/// One job message as the worker received it.
struct job_seen {
  int64_t delivery_id = 0;
  int64_t event_id = 0;
  std::string dispatch_id, job, event_type, payload_json;
  bool last_attempt = false;
  double received_at = 0; ///< seconds (steady clock) when it arrived
  // AMQP properties
  std::string message_id, correlation_id, type;
  std::map<std::string, std::string> headers; ///< the string ones
};

enum class answer { completed, retry, failed, silent };

class test_worker {
public:
  /// `send` is how many times this delivery reached the worker, from 1.
  using policy = std::function<answer(const job_seen& job, int send)>;

  test_worker(std::string url, std::string queue, policy p);
  ~test_worker();

  /// Everything received so far, in order.
  std::vector<job_seen> seen() const;

  /// The sends of one delivery, in order.
  std::vector<job_seen> seen_for(int64_t delivery_id) const;

  /// Messages that were not valid job messages.
  int malformed() const { return malformed_; }

private:
  void run();

  std::string url_, queue_;
  policy policy_;
  std::atomic<bool> stop_{false};
  std::atomic<int> malformed_{0};
  mutable std::mutex mtx_;
  std::vector<job_seen> seen_;
  std::thread thread_;
};

} // namespace outbox::testing
