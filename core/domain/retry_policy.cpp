#include "core/domain/retry_policy.hpp"

#include <algorithm>

#include "core/base/timestamp.hpp"

namespace outbox {

std::optional<time_point> effective_expiry(int64_t route_ttl_seconds,
                                           time_point created_at,
                                           std::optional<time_point> event_expiry) {
  std::optional<time_point> route_expiry;
  if (route_ttl_seconds > 0)
    route_expiry = plus_seconds(created_at, route_ttl_seconds);
  if (route_expiry && event_expiry)
    return std::min(*route_expiry, *event_expiry);
  return route_expiry ? route_expiry : event_expiry;
}

std::optional<std::chrono::seconds> retry_delay(const delivery_rules& rules,
                                                int32_t failed_attempts) {
  auto& delays = rules.retry_delays_seconds;
  if (failed_attempts < 1 || delays.empty())
    return std::nullopt;
  auto index = static_cast<size_t>(failed_attempts - 1);
  if (index < delays.size())
    return std::chrono::seconds{delays[index]};
  if (rules.repeat_last_delay)
    return std::chrono::seconds{delays.back()};
  return std::nullopt;
}

failure_decision decide_after_failure(const delivery_rules& rules,
                                      int32_t failed_attempts, time_point now,
                                      std::optional<time_point> expires_at) {
  auto delay = retry_delay(rules, failed_attempts);
  if (!delay)
    return {failure_outcome::fail, {}};
  auto next = plus_seconds(now, delay->count());
  // A retry that could only start after the time to live would never be
  // sent: the delivery expires now instead of waiting to expire.
  if (expires_at && next >= *expires_at)
    return {failure_outcome::expire, {}};
  return {failure_outcome::retry, next};
}

bool is_last_attempt(const delivery_rules& rules, int32_t failed_so_far,
                     time_point now, std::optional<time_point> expires_at) {
  return decide_after_failure(rules, failed_so_far + 1, now, expires_at).outcome
         != failure_outcome::retry;
}

int64_t message_lifetime_ms(const delivery_rules& rules, time_point now,
                            std::optional<time_point> expires_at) {
  using std::chrono::milliseconds;
  int64_t lifetime = int64_t{rules.delivery_timeout_seconds} * 1000;
  if (expires_at) {
    // Rounded up: the message must not die before its time to live does.
    auto left = std::chrono::ceil<milliseconds>(*expires_at - now).count();
    lifetime = std::min(lifetime, left);
  }
  return std::max<int64_t>(lifetime, 1);
}

bool is_expired(std::optional<time_point> expires_at, time_point now) {
  return expires_at && *expires_at <= now;
}

} // namespace outbox
