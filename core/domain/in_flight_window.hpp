// How many deliveries of one queue may be out at once: as many as its
// workers finish within a fraction of the delivery timeout, measured, with
// the config's `maxInFlight` as the ceiling (docs/design.md "The in-flight
// window"). A delivery waits at most about that fraction of its timeout
// behind the others before a worker takes it, so its timeout measures the
// worker, not how much the relay sent ahead.
//
// The workers' completion rate comes from the claims, which count the
// queue's dispatched deliveries anyway: a cohort is what was out at one
// claim; later claims count how many of its members are still out. What
// left the cohort was finished by a worker (or answered, or timed out),
// whichever dispatcher sent it, so every dispatcher of a queue, on any
// node, measures the same rate without a write of its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace outbox {

/// What a claim saw of its queue, besides what it took.
struct window_sample {
  int64_t now_us = 0;    ///< the database's clock at the claim
  int64_t in_flight = 0; ///< dispatched deliveries, before the claim took any
  /// Of those dispatched at or before the cohort's start, how many are
  /// still dispatched (all of in_flight when no cohort was asked about).
  int64_t cohort_left = 0;
  /// The shortest delivery timeout among those in flight; 0 when none is.
  double timeout_seconds = 0;
};

struct window_settings {
  int64_t ceiling = 1000; ///< config `maxInFlight`
  int64_t start = 100;    ///< the window before anything is measured
  int64_t floor = 1;      ///< never less: a stalled queue still gets a probe
  /// The share of the delivery timeout a delivery may wait behind the
  /// others: the window is the completion rate × timeout × this.
  double fraction = 0.5;
  /// A cohort not yet mostly finished is judged after this long.
  std::chrono::milliseconds interval{1000};
  /// A cohort with at most this share of it still out counts as finished
  /// (the workers keep up): a few stuck jobs do not hold the judgment.
  double finished_share = 0.125;
};

class in_flight_window {
public:
  explicit in_flight_window(window_settings s = {});

  /// The queue's in-flight limit for the next claim.
  int64_t limit() const { return limit_; }

  /// The start of the cohort whose members the next claim should count
  /// (a time in the database's microseconds); nullopt: none yet.
  const std::optional<int64_t>& cohort_start_us() const {
    return cohort_start_us_;
  }

  /// After a claim: what it saw, and how many deliveries it took (they
  /// were dispatched at the sample's time and belong to the next cohort).
  /// The sample must answer cohort_start_us() as it was before this call.
  void observe(const window_sample& s, int64_t taken);

  /// Deliveries taken at the last claim that went back to pending unsent
  /// (the broker blocked publishers): they are not finished work.
  void released(int64_t n);

  /// Forgets the cohort: the next claim starts a new one (after a time in
  /// which this dispatcher claimed nothing, whose measure would mislead).
  void restart() { cohort_start_us_.reset(); }

  /// The last measured completion rate (deliveries a second); 0 before
  /// the first measure.
  double completion_rate() const { return rate_; }

  /// True once a cohort was judged.
  bool measured() const { return measured_; }

private:
  void start_cohort(const window_sample& s, int64_t taken);

  window_settings s_;
  int64_t limit_;
  double rate_ = 0;
  bool measured_ = false;
  int64_t taken_in_cohort_ = 0; ///< of the last claim, counted in the cohort
  double timeout_seconds_ = 0; ///< the last one seen (0: none yet)
  std::optional<int64_t> cohort_start_us_;
  int64_t cohort_size_ = 0;
  /// In flight at the cohort's start plus what this dispatcher took since:
  /// with the sample's count, a lower bound of all completions (others'
  /// claims only raise the count).
  int64_t own_out_ = 0;
};

} // namespace outbox
