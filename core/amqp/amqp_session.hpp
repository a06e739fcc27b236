// One role's broker connection that heals itself, as pg_session is for
// PostgreSQL: it connects on first use, declares the role's queues (and
// starts consuming) on every connect, and drops a connection found broken so
// that the next use connects again. The dispatcher's publisher, the result
// handler's consumer, the worker's two connections and the producer's
// direct publishing are each one session. Not thread-safe.
//
// The URL may be a broker list (amqp_url_list.hpp), the nodes of one
// cluster: a connect tries them in order and takes the first that answers.
// After a lost connection the next connect starts with the broker after the
// one lost (and goes round the list), so that a node that went away is not
// the first one waited for. A refused queue declaration is not a node's
// fault: it ends the connect without trying the others.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "core/amqp/amqp_client.hpp"

namespace outbox {

struct amqp_session_options {
  std::string url; ///< one URL or a broker list
  std::string name; ///< shows in the broker's connection list
  /// Durable queues declared on every connect: a mandatory publish to a
  /// queue nobody declared yet would come back returned.
  std::vector<std::string> declare;
  std::string consume; ///< the queue consumed; empty for a publisher
  uint16_t prefetch = 0; ///< unacked messages a consumer holds at most
  /// The type of the queues in `declare` (a job queue and its results
  /// queue have the same).
  queue_type type = queue_type::classic;
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

  /// Declares `queue` (of `type`) on the live connection and on every
  /// later connect.
  caf::error declare(const std::string& queue,
                     queue_type type = queue_type::classic);

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

  /// True while the broker blocks this connection's publishing
  /// (amqp_client::blocked).
  bool blocked() const;

  /// A publisher's look at how many messages wait in `queue`
  /// (amqp_client::ready_messages) over its live connection.
  caf::expected<int64_t> ready_messages(const std::string& queue);

  /// Drops the connection; the next use connects again, starting with the
  /// broker after this one's.
  void reset();

  /// The list entry (from 0) of the broker connected to, or last connected
  /// to (0 before the first connect).
  size_t broker_index() const { return current_; }

private:
  caf::error connect();
  caf::error set_up(amqp_client& c);
  amqp_session_options opts_;
  /// Queues declared later (declare()), each with its own type.
  std::vector<std::pair<std::string, queue_type>> extra_;
  std::unique_ptr<amqp_client> client_;
  size_t current_ = 0; ///< the list entry connected to, or last connected to
  bool lost_ = false;  ///< a connection to current_ was dropped since
};

} // namespace outbox
