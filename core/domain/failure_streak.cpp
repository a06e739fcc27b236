#include "core/domain/failure_streak.hpp"

#include <algorithm>

#include "core/domain/backoff.hpp"

namespace outbox {

failure_streak::failure_streak(int64_t every, std::chrono::seconds interval)
  : every_(every > 0 ? every : 1), interval_(interval) {
}

bool failure_streak::failed(time_point now) {
  if (++count_ == 1)
    since_ = now;
  bool log = count_ == 1 || count_ - logged_at_count_ >= every_
             || now - logged_at_ >= interval_;
  if (log) {
    logged_at_count_ = count_;
    logged_at_ = now;
  }
  return log;
}

int64_t failure_streak::succeeded() {
  auto n = count_;
  count_ = 0;
  logged_at_count_ = 0;
  return n;
}

std::chrono::milliseconds failure_streak::backoff(std::chrono::milliseconds cap) const {
  // backoff_delay stops growing long before an int overflows.
  return backoff_delay(static_cast<int>(std::min<int64_t>(count_, 1000)), cap);
}

} // namespace outbox
