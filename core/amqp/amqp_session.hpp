// One role's broker connection that heals itself, as pg_session is for
// PostgreSQL: it connects on first use, declares the role's queues (and
// starts consuming) on every connect, and drops a connection found broken so
// that the next use connects again. The dispatcher's publisher, the result
// handler's consumer, the worker's two connections and the producer's
// direct publishing are each one session. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/amqp/amqp_client.hpp"

namespace outbox {

struct amqp_session_options {
  std::string url;
  std::string name; ///< shows in the broker's connection list
  /// Durable queues declared on every connect: a mandatory publish to a
  /// queue nobody declared yet would come back returned.
  std::vector<std::string> declare;
  std::string consume; ///< the queue consumed; empty for a publisher
  uint16_t prefetch = 0; ///< unacked messages a consumer holds at most
};

class amqp_session {
public:
  explicit amqp_session(amqp_session_options opts);

  /// A live connection, or a new one with its queues declared. A
  /// publisher's is kept alive on the way (amqp_client::keep_alive: a due
  /// heartbeat, and a connection the broker dropped while idle is found
  /// here, before anything is written); a consumer's heartbeats flow while
  /// it waits in next_message.
  caf::error ready();

  /// Declares `queue` on the live connection and on every later connect.
  caf::error declare(const std::string& queue);

  /// Publishes like amqp_client::publish_batch, connecting first when
  /// needed. Messages found `unsent` (the connection was broken before they
  /// were written) go once more over a new connection: they provably never
  /// reached the broker, so a second send cannot duplicate them, and nobody
  /// is charged an attempt for a connection that broke while idle.
  std::vector<publish_status> publish(const std::vector<outgoing_message>& ms,
                                      std::chrono::milliseconds timeout);

  /// A consumer's next message (nullopt on timeout). A failure drops the
  /// connection: the broker puts every unacked message back in the queue.
  caf::expected<std::optional<incoming_message>>
  next_message(std::chrono::milliseconds timeout);

  /// Acks through `tag` (one message, or all up to it with `multiple`); a
  /// failure drops the connection.
  caf::error ack(uint64_t tag, bool multiple);

  /// For a publisher between uses: services the connection (see ready())
  /// without connecting; false, and dropped, when it is broken.
  bool keep_alive();

  /// True while a connection is held and not known to be broken.
  bool is_open() const;

  /// Drops the connection; the next use connects again.
  void reset();

private:
  caf::error connect();
  amqp_session_options opts_;
  std::unique_ptr<amqp_client> client_;
};

} // namespace outbox
