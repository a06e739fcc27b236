// A route: which job, on which queue, by which rules, an event type gets.
// Its rules are copied into every delivery it creates (the "snapshot"), so
// a config change never alters deliveries already made.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace outbox {

/// What happens when a new delivery meets a waiting one of the same key.
enum class merge_mode {
  replace,    ///< the newest wins; the waiting one is superseded
  json_merge, ///< RFC 7396 merge of the waiting payload with the new one
  none,       ///< both are delivered
};

/// Returns "replace", "json-merge" or "none".
const char* to_string(merge_mode x);

/// Parses the config spelling of a merge mode.
std::optional<merge_mode> parse_merge_mode(const std::string& text);

/// Whether the deliveries of one key, job and queue go out one at a time
/// in event order (docs/ordering.md).
enum class key_ordering {
  none, ///< every ready delivery goes out at once
  key,  ///< one at a time per key, in event order
};

/// What a delivery of an ordered key that fails or expires for good does
/// to the deliveries of its key behind it.
enum class failure_policy {
  continue_key, ///< the next one goes on
  block_key,    ///< the key waits for an operator (`outboxctl skip/retry`)
};

/// Returns "none" or "key".
const char* to_string(key_ordering x);
std::optional<key_ordering> parse_key_ordering(const std::string& text);

/// Returns "continue" or "block".
const char* to_string(failure_policy x);
std::optional<failure_policy> parse_failure_policy(const std::string& text);

/// The rule a job queue's name breaks, "" for none: a name AMQP carries
/// with room for ".results" (at most 247 bytes), not "amq.*" (RabbitMQ's).
/// The config and the status node's joins apply the same rule.
std::string check_queue_name(const std::string& name);

/// The retry, timeout and expiry rules of one route (and of each delivery).
struct delivery_rules {
  std::vector<int32_t> retry_delays_seconds;
  bool repeat_last_delay = false;
  int32_t delivery_timeout_seconds = 300;
  int64_t ttl_seconds = 0; ///< 0: never expires
  merge_mode merge = merge_mode::replace;
  key_ordering ordering = key_ordering::none;
  failure_policy on_failure = failure_policy::continue_key;
};

struct route {
  std::string event_type;
  std::string job;
  std::string queue;
  delivery_rules rules;
};

} // namespace outbox
