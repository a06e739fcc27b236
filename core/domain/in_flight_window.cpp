#include "core/domain/in_flight_window.hpp"

#include <algorithm>

namespace outbox {

in_flight_window::in_flight_window(window_settings s)
  : s_(s), limit_(std::clamp(s.start, std::min(s.floor, s.ceiling), s.ceiling)) {
}

void in_flight_window::start_cohort(const window_sample& s, int64_t taken) {
  cohort_start_us_ = s.now_us;
  cohort_size_ = s.in_flight + taken;
  own_out_ = cohort_size_;
  taken_in_cohort_ = taken;
}

void in_flight_window::released(int64_t n) {
  n = std::max<int64_t>(0, n);
  own_out_ = std::max<int64_t>(0, own_out_ - n);
  auto ours = std::min(n, taken_in_cohort_);
  cohort_size_ -= ours;
  taken_in_cohort_ -= ours;
}

void in_flight_window::observe(const window_sample& s, int64_t taken) {
  if (s.timeout_seconds > 0)
    timeout_seconds_ = s.timeout_seconds;
  if (!cohort_start_us_ || cohort_size_ == 0 || s.now_us < *cohort_start_us_) {
    // Nothing was out (no information), or the clock went back.
    start_cohort(s, taken);
    return;
  }
  auto elapsed = std::chrono::microseconds{s.now_us - *cohort_start_us_};
  auto left = std::clamp<int64_t>(s.cohort_left, 0, cohort_size_);
  bool finished = static_cast<double>(left)
                  <= static_cast<double>(cohort_size_) * s_.finished_share;
  if (!finished && elapsed < s_.interval) {
    own_out_ += taken; // still measuring this cohort
    taken_in_cohort_ = 0;
    return;
  }
  if (elapsed.count() <= 0) {
    own_out_ += taken;
    taken_in_cohort_ = 0;
    return;
  }
  // Two lower bounds of what finished since the cohort's start: its own
  // members that left, and what this dispatcher had out less what is out
  // now (exact with one dispatcher: it also counts the newer ones that
  // finished).
  auto done = std::max(cohort_size_ - left, own_out_ - s.in_flight);
  rate_ = static_cast<double>(done) / (static_cast<double>(elapsed.count()) / 1e6);
  measured_ = true;
  if (timeout_seconds_ > 0) {
    // Clamped before the cast: a huge rate or timeout must not overflow.
    auto target = static_cast<int64_t>(
      std::min(rate_ * timeout_seconds_ * s_.fraction,
               static_cast<double>(s_.ceiling)));
    // Finished: the workers keep up, so the window only grows (a measure
    // over few deliveries is a lower bound of what they can do), but to at
    // most twice what this cohort had out (and never below the start): a
    // window stays only as large as it is used. One that grew while little
    // was out would let a backlog (after the relay stood still) out at
    // once, to wait in the queue past its timeouts. Not finished within
    // the interval: the window is what they finished.
    auto used = std::max(2 * cohort_size_, s_.start);
    auto next = finished ? std::min(std::max(limit_, target), used) : target;
    limit_ = std::clamp(next, std::min(s_.floor, s_.ceiling), s_.ceiling);
  }
  start_cohort(s, taken);
}

} // namespace outbox
