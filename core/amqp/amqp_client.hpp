// A RabbitMQ connection on rabbitmq-c with errors as values: durable queues,
// persistent publishing with pipelined publisher confirms and `mandatory`,
// and consuming with a prefetch and explicit acks. Use one connection per
// role (publisher or consumer): confirms and deliveries interleave badly on
// one connection. Not thread-safe; meant to live in one detached actor.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/amqp/amqp_url.hpp"
#include "core/amqp/queue_type.hpp"
#include "core/domain/broker_message.hpp"

namespace outbox {

struct queue_options {
  /// x-max-length; with reject_overflow the broker nacks publishes beyond it.
  std::optional<int64_t> max_length;
  bool reject_overflow = false;
  /// x-queue-type. A queue keeps the type it was first declared with:
  /// declaring it with another one is refused (see declare_queue).
  queue_type type = queue_type::classic;
};

class amqp_client {
public:
  ~amqp_client();
  amqp_client(const amqp_client&) = delete;
  amqp_client& operator=(const amqp_client&) = delete;

  /// Connects and opens a channel. `url` may be a broker list
  /// (amqp_url_list.hpp): its entries are tried in order and the first that
  /// answers is taken (amqp_session adds the failover). `name` shows in the broker's connection
  /// list. `heartbeat` is what the client proposes (the URL's `heartbeat`
  /// wins over it; the broker's lower proposal wins over both). rabbitmq-c
  /// sends heartbeats only from inside its calls: a consumer does so while
  /// it waits in next_message, a publisher when keep_alive() is called.
  static caf::expected<std::unique_ptr<amqp_client>>
  connect(const std::string& url, const std::string& name,
          std::chrono::seconds heartbeat = std::chrono::seconds{10});

  /// Declares a durable queue (idempotent with the same options). A queue
  /// that exists with another type or other arguments is refused by the
  /// broker (406 PRECONDITION_FAILED, a channel close): that comes back as
  /// errc::broker_error naming the queue, and the channel is reopened.
  caf::error declare_queue(const std::string& name, const queue_options& opts = {});

  /// How many messages of a queue wait for a consumer (a passive
  /// declare): not for a consuming connection, whose deliveries could
  /// arrive in between.
  caf::expected<int64_t> ready_messages(const std::string& name);

  /// Deletes a queue (tests clean up with it).
  caf::error delete_queue(const std::string& name);

  /// Publishes all messages persistent and mandatory, pipelined, then waits
  /// up to `timeout` for their confirms. Returns one status per message, in
  /// order; anything not confirmed in time is `lost`. A connection found
  /// broken before a message was written leaves it `unsent` (first checked
  /// with keep_alive(), so a connection dropped while idle sends nothing).
  /// After a broken connection is_open() is false and every later call
  /// fails fast.
  std::vector<publish_status> publish_batch(const std::vector<outgoing_message>& ms,
                                            std::chrono::milliseconds timeout);

  /// Starts consuming `queue` with at most `prefetch` unacked messages.
  caf::error consume(const std::string& queue, uint16_t prefetch);

  /// Waits up to `timeout` for the next message: nullopt on timeout.
  caf::expected<std::optional<incoming_message>>
  next_message(std::chrono::milliseconds timeout);

  /// Acks one message (or all up to `tag` with `multiple`).
  caf::error ack(uint64_t tag, bool multiple = false);

  /// True while the broker blocks this connection's publishing (a memory
  /// or disk alarm: connection.blocked until connection.unblocked, which
  /// a publisher reads in keep_alive() and while it waits for confirms).
  bool blocked() const;

  /// Rejects one message, never requeued (retries belong to the outbox).
  caf::error reject(uint64_t tag);

  /// Returns false once the connection is known to be broken.
  bool is_open() const;

  /// For a connection that consumes nothing (a publisher between batches):
  /// sends a heartbeat when half the heartbeat interval passed without a
  /// write, reads what the broker sent meanwhile (its heartbeats, a close)
  /// without waiting, and returns is_open(). Call it at least every half
  /// interval to keep an idle connection alive; a connection the broker
  /// already dropped is found broken here, before anything is written.
  bool keep_alive();

  /// The negotiated heartbeat interval (0: none).
  std::chrono::seconds heartbeat() const;

private:
  struct impl;
  static caf::expected<std::unique_ptr<amqp_client>>
  connect_one(const std::string& url, const std::string& name,
              std::chrono::seconds heartbeat);
  explicit amqp_client(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace outbox
