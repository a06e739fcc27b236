// The broker side of the seams on rabbitmq-c: a publisher of job messages
// and a source of result messages, each one amqp_session (its own
// connection, the queues it needs declared on every connect, connected
// again after a break).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/amqp/amqp_session.hpp"
#include "core/domain/stores.hpp"

namespace outbox {

class amqp_job_publisher : public job_publisher {
public:
  /// Declares `queue` and its results queue (both of `type`) on every
  /// connect. `url` may be a broker list. A `database` (of a config of
  /// several) goes on every message as the `outbox-database` header.
  amqp_job_publisher(std::string url, std::string queue,
                     std::chrono::milliseconds confirm_timeout,
                     queue_type type = queue_type::classic,
                     std::string database = "");
  caf::error ready() override;
  /// Messages the broker never got because the connection was found
  /// broken go again over a new one (amqp_session::publish).
  std::vector<publish_status>
  publish(const std::vector<outgoing_message>& ms) override;
  bool blocked() const override;
  caf::expected<int64_t> results_waiting() override;

private:
  amqp_session session_;
  std::chrono::milliseconds confirm_timeout_;
  std::string results_queue_;
  std::string database_;
};

class amqp_result_source : public result_source {
public:
  /// Consumes the results queue of `queue` with `prefetch` unacked
  /// messages; declares both queues as `type`. With a `database`, consumes
  /// that database's parked results instead (parked_results_queue).
  amqp_result_source(std::string url, std::string queue, uint16_t prefetch,
                     queue_type type = queue_type::classic,
                     const std::string& database = "");
  caf::expected<std::vector<incoming_message>>
  fetch(size_t max, std::chrono::milliseconds wait) override;
  caf::error ack_through(uint64_t tag) override;

private:
  amqp_session session_;
};

class amqp_result_parker : public result_parker {
public:
  /// Declares the parked results queue of each of `databases` (as `type`)
  /// on every connect.
  amqp_result_parker(std::string url, std::string queue,
                     const std::vector<std::string>& databases,
                     std::chrono::milliseconds confirm_timeout,
                     queue_type type = queue_type::classic);
  caf::error park(const std::string& database,
                  const std::vector<send_result>& results) override;

private:
  amqp_session session_;
  std::string queue_;
  std::chrono::milliseconds confirm_timeout_;
};

} // namespace outbox
