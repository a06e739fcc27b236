// Retry, time-to-live and last-attempt arithmetic: pure functions of a
// delivery's rule snapshot, its failed attempts and the clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "core/base/timestamp.hpp"
#include "core/domain/route.hpp"

namespace outbox {

/// What a failed attempt leads to.
enum class failure_outcome {
  retry,  ///< back to pending, available again at `available_at`
  fail,   ///< final: no retry delay left (or the error was not retryable)
  expire, ///< final: the next try would fall after the time to live
};

struct failure_decision {
  failure_outcome outcome = failure_outcome::fail;
  time_point available_at{}; ///< only meaningful for `retry`
};

/// Returns when a delivery expires: the earlier of `created_at + route TTL`
/// (a TTL of 0 never expires) and the event's own `expires_at`; nullopt when
/// neither applies.
std::optional<time_point> effective_expiry(int64_t route_ttl_seconds,
                                           time_point created_at,
                                           std::optional<time_point> event_expiry);

/// Returns the delay before the retry that follows failure number
/// `failed_attempts` (1 = the first failure), or nullopt when no retry is left.
std::optional<std::chrono::seconds>
retry_delay(const delivery_rules& rules, int32_t failed_attempts);

/// Decides the fate of a delivery whose `failed_attempts`-th attempt just
/// failed at `now` (`failed_attempts` counts this failure).
failure_decision decide_after_failure(const delivery_rules& rules,
                                      int32_t failed_attempts, time_point now,
                                      std::optional<time_point> expires_at);

/// Returns true when a failure of the send about to be made at `now` would be
/// final (`failed_so_far` failures happened before it): the wire's
/// `outboxLastAttempt`.
bool is_last_attempt(const delivery_rules& rules, int32_t failed_so_far,
                     time_point now, std::optional<time_point> expires_at);

/// How long the broker may keep a job message sent at `now` unread before it
/// drops it, in milliseconds (at least 1): until the relay counts the send
/// as timed out, after which a worker would do work whose result is stale,
/// or until the delivery's time to live ends, whichever comes first.
int64_t message_lifetime_ms(const delivery_rules& rules, time_point now,
                            std::optional<time_point> expires_at);

/// Returns true when `expires_at` is set and not after `now`.
bool is_expired(std::optional<time_point> expires_at, time_point now);

} // namespace outbox
