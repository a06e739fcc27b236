// Messages as the passes hand them to the broker and take them from it, and
// the fate of a published one: the job publisher's and result source's
// vocabulary (core/domain/stores.hpp), whatever implements them.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace outbox {

struct outgoing_message {
  std::string routing_key; ///< the queue (default exchange)
  std::string body;
  std::string message_id;
  std::string correlation_id;
  std::string type;
  std::string content_type = "application/json";
  std::string expiration; ///< per-message TTL in ms ("" = none)
  /// The AMQP headers table (long strings only).
  std::map<std::string, std::string> headers;
};

/// The fate of one published message.
enum class publish_status {
  confirmed, ///< routed to a queue and acked by the broker
  nacked,    ///< the broker refused it (e.g. a full queue that rejects)
  returned,  ///< no queue took it (mandatory): it would have been lost
  lost,      ///< the channel or connection broke, or no confirm in time
  /// The connection was found broken before the message was written: it
  /// never reached the broker and may be sent again on a new connection.
  unsent,
  /// Written while the broker blocked publishers (a resource alarm) and
  /// not confirmed in time: the broker may still take it after the alarm.
  /// Not the delivery's failure: sent again without an attempt counted.
  blocked,
};

/// Returns "confirmed", "nacked", "returned", "lost", "unsent" or "blocked".
const char* to_string(publish_status x);

struct incoming_message {
  uint64_t delivery_tag = 0;
  std::string body;
  std::string message_id;
  std::string correlation_id;
  std::string type;
  std::string expiration; ///< per-message TTL in ms, "" if none
  /// The string entries of the AMQP headers table (others are skipped).
  std::map<std::string, std::string> headers;
  bool redelivered = false;
};

} // namespace outbox
