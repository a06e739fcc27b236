#include "core/domain/routing_horizon.hpp"

#include <algorithm>

namespace outbox {

int64_t routing_horizon::advance(horizon_sample now, uint64_t oldest_running) {
  auto before = safe_;
  while (!samples_.empty() && samples_.front().xid < oldest_running) {
    safe_ = std::max(safe_, samples_.front().last_event_id);
    samples_.pop_front();
  }
  bool sampled = false;
  // A sample that names no new event adds nothing to the one before it.
  if (now.last_event_id > safe_
      && (samples_.empty() || samples_.back().last_event_id < now.last_event_id)) {
    // While an open transaction stops the front, thin out the middle: a
    // sample dropped only makes the safe id move in coarser steps.
    if (samples_.size() >= max_samples)
      samples_.erase(samples_.begin() + 1);
    samples_.push_back(now);
    sampled = true;
  }
  progressed_ = sampled || safe_ > before;
  return safe_;
}

std::chrono::milliseconds
routing_horizon::retry_delay(std::chrono::milliseconds cap) {
  using std::chrono::milliseconds;
  if (progressed_) {
    stalled_ = 0;
    return milliseconds{2};
  }
  stalled_ = std::min(stalled_ + 1, 20);
  return std::min(cap, milliseconds{int64_t{2} << std::min(stalled_, 10)});
}

} // namespace outbox
