#include "core/amqp/amqp_endpoints.hpp"

#include "core/amqp/amqp_resend.hpp"
#include "core/base/errors.hpp"
#include "core/amqp/wire.hpp"

namespace outbox {

amqp_job_publisher::amqp_job_publisher(std::string url, std::string queue,
                                       std::chrono::milliseconds confirm_timeout)
  : url_(std::move(url)), queue_(std::move(queue)),
    confirm_timeout_(confirm_timeout) {
}

caf::expected<std::unique_ptr<amqp_client>> amqp_job_publisher::connect() const {
  auto c = amqp_client::connect(url_, "outbox dispatcher " + queue_);
  if (!c)
    return c.error();
  // Workers may start after the relay: the queues must exist before the
  // first mandatory publish, or every message would come back returned.
  if (auto err = (*c)->declare_queue(queue_))
    return err;
  if (auto err = (*c)->declare_queue(results_queue(queue_)))
    return err;
  return c;
}

caf::error amqp_job_publisher::ready() {
  // Every pass comes by here, also the idle ones: that keeps the heartbeats
  // flowing while nothing is published (at the default --sleep of 1 s), and
  // renews a connection the broker dropped before anything is claimed.
  if (client_ && client_->keep_alive())
    return caf::none;
  client_.reset();
  auto c = connect();
  if (!c)
    return c.error();
  client_ = std::move(*c);
  return caf::none;
}

std::vector<publish_status>
amqp_job_publisher::publish(const std::vector<outgoing_message>& ms) {
  return publish_resending(client_, [this] { return connect(); }, ms,
                           confirm_timeout_);
}

amqp_result_source::amqp_result_source(std::string url, std::string queue,
                                       uint16_t prefetch)
  : url_(std::move(url)), queue_(std::move(queue)), prefetch_(prefetch) {
}

caf::error amqp_result_source::connect() {
  auto c = amqp_client::connect(url_, "outbox results " + queue_);
  if (!c)
    return c.error();
  auto results = results_queue(queue_);
  if (auto err = (*c)->declare_queue(queue_))
    return err;
  if (auto err = (*c)->declare_queue(results))
    return err;
  if (auto err = (*c)->consume(results, prefetch_))
    return err;
  client_ = std::move(*c);
  return caf::none;
}

caf::expected<std::vector<incoming_message>>
amqp_result_source::fetch(size_t max, std::chrono::milliseconds wait) {
  if (!client_ || !client_->is_open()) {
    client_.reset();
    if (auto err = connect())
      return err;
  }
  std::vector<incoming_message> out;
  auto timeout = wait;
  while (out.size() < max) {
    auto m = client_->next_message(timeout);
    if (!m) {
      // The broker puts every unacked message back in the queue, including
      // those taken in this call: the next consumer gets them again.
      client_.reset();
      return m.error();
    }
    if (!*m)
      break;
    out.push_back(std::move(**m));
    timeout = std::chrono::milliseconds{0};
  }
  return out;
}

caf::error amqp_result_source::ack_through(uint64_t tag) {
  if (!client_)
    return make_error(errc::broker_unavailable, "results connection closed");
  auto err = client_->ack(tag, true);
  if (err)
    client_.reset();
  return err;
}

} // namespace outbox
