#include "core/domain/routing_horizon.hpp"

#include <algorithm>

namespace outbox {

namespace {

bool any_of_in(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::any_of(a.begin(), a.end(),
                     [&](const std::string& x) { return b.count(x) > 0; });
}

} // namespace

int64_t routing_horizon::advance(horizon_sample now) {
  // The newest id taken went back: the database was restored to an earlier
  // point, or the sequence reset. Ids at or below the old safe id may be
  // taken again by transactions still open, so nothing known holds.
  bool went_back = now.last_event_id < safe_
                   || (!samples_.empty() && now.last_event_id < samples_.back().last_event_id);
  if (went_back) {
    samples_.clear();
    safe_ = 0;
  }
  auto before = safe_;
  // A transaction id (virtualxid) is never used again: one that let go of
  // the lock does not take it back.
  while (!samples_.empty() && !any_of_in(samples_.front().holders, now.holders)) {
    safe_ = std::max(safe_, samples_.front().last_event_id);
    samples_.pop_front();
  }
  bool sampled = false;
  if (now.last_event_id > safe_) {
    if (now.holders.empty()) {
      // Nobody inserting: everything up to Q is visible already.
      safe_ = now.last_event_id;
      samples_.clear();
    } else if (samples_.empty()
               || samples_.back().last_event_id < now.last_event_id) {
      // While an open transaction stops the front, thin out the middle: a
      // sample dropped only makes the safe id move in coarser steps.
      if (samples_.size() >= max_samples)
        samples_.erase(samples_.begin() + 1);
      samples_.push_back(std::move(now));
      sampled = true;
    }
  }
  progressed_ = sampled || safe_ > before;
  return safe_;
}

void routing_horizon::reset() {
  samples_.clear();
  safe_ = 0;
  progressed_ = false;
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
