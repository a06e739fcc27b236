#include "core/amqp/amqp_endpoints.hpp"

#include "core/amqp/wire.hpp"
#include "core/base/errors.hpp"

namespace outbox {

amqp_job_publisher::amqp_job_publisher(std::string url, std::string queue,
                                       std::chrono::milliseconds confirm_timeout,
                                       queue_type type, std::string database)
  // Workers may start after the relay: the queues must exist before the
  // first mandatory publish, or every message would come back returned.
  : session_({url,
              "outbox dispatcher " + queue
                + (database.empty() ? "" : " of " + database),
              {queue, results_queue(queue)}, {}, 0, type}),
    confirm_timeout_(confirm_timeout), results_queue_(results_queue(queue)),
    database_(std::move(database)) {
}

caf::error amqp_job_publisher::ready() {
  // Every pass comes by here, also the idle ones: that keeps the heartbeats
  // flowing while nothing is published (at the default --sleep of 1 s), and
  // renews a connection the broker dropped before anything is claimed.
  return session_.ready();
}

std::vector<publish_status>
amqp_job_publisher::publish(const std::vector<outgoing_message>& ms) {
  if (database_.empty())
    return session_.publish(ms, confirm_timeout_);
  // Which database a job came from, for a worker that serves several (an
  // `outbox*` header name is never an event's: is_reserved_header).
  auto stamped = ms;
  for (auto& m : stamped)
    m.headers[database_header] = database_;
  return session_.publish(stamped, confirm_timeout_);
}

bool amqp_job_publisher::blocked() const {
  return session_.blocked();
}

caf::expected<int64_t> amqp_job_publisher::results_waiting() {
  return session_.ready_messages(results_queue_);
}

namespace {

amqp_session_options result_source_options(std::string url, const std::string& queue,
                                           uint16_t prefetch, queue_type type,
                                           const std::string& database) {
  if (database.empty())
    return {std::move(url), "outbox results " + queue,
            {queue, results_queue(queue)}, results_queue(queue), prefetch, type};
  auto parked = parked_results_queue(queue, database);
  return {std::move(url), "outbox parked results " + queue + " of " + database,
          {queue, results_queue(queue), parked}, parked, prefetch, type};
}

std::vector<std::string> parker_queues(const std::string& queue,
                                       const std::vector<std::string>& dbs) {
  std::vector<std::string> out;
  for (auto& db : dbs)
    out.push_back(parked_results_queue(queue, db));
  return out;
}

} // namespace

amqp_result_source::amqp_result_source(std::string url, std::string queue,
                                       uint16_t prefetch, queue_type type,
                                       const std::string& database)
  : session_(result_source_options(std::move(url), queue, prefetch, type, database)) {
}

amqp_result_parker::amqp_result_parker(std::string url, std::string queue,
                                       const std::vector<std::string>& databases,
                                       std::chrono::milliseconds confirm_timeout,
                                       queue_type type)
  : session_({std::move(url), "outbox result parker " + queue,
              parker_queues(queue, databases), {}, 0, type}),
    queue_(std::move(queue)), confirm_timeout_(confirm_timeout) {
}

caf::error amqp_result_parker::park(const std::string& database,
                                    const std::vector<send_result>& results) {
  if (auto err = session_.ready())
    return err;
  auto ms = result_batch_messages(queue_, results);
  for (auto& m : ms)
    m.routing_key = parked_results_queue(queue_, database);
  auto statuses = session_.publish(ms, confirm_timeout_);
  for (size_t i = 0; i < ms.size(); ++i)
    if (i >= statuses.size() || statuses[i] != publish_status::confirmed)
      return make_error(errc::broker_unavailable,
                        "parked results of " + database + " were not confirmed");
  return caf::none;
}

caf::expected<std::vector<incoming_message>>
amqp_result_source::fetch(size_t max, std::chrono::milliseconds wait) {
  if (auto err = session_.ready())
    return err;
  std::vector<incoming_message> out;
  auto timeout = wait;
  while (out.size() < max) {
    // A failure drops the connection, and the broker puts every unacked
    // message back in the queue, including those taken in this call: the
    // next consumer gets them again.
    auto m = session_.next_message(timeout);
    if (!m)
      return m.error();
    if (!*m)
      break;
    out.push_back(std::move(**m));
    timeout = std::chrono::milliseconds{0};
  }
  return out;
}

caf::error amqp_result_source::ack_through(uint64_t tag) {
  return session_.ack(tag, /*multiple*/ true);
}

} // namespace outbox
