// Which failures of a run of failures in a row are worth a log line: the
// first, then a summary every `every`-th failure or once `interval` passed
// since the last line, whichever comes first. A broker or database that
// stays away then costs a line now and then ("still failing, N failures
// since ..."), not one per retry. The one counter of such a run: it also
// gives the reconnect backoff, so a caller keeps no count of its own.
#pragma once

#include <chrono>
#include <cstdint>

#include "core/base/timestamp.hpp"

namespace outbox {

class failure_streak {
public:
  explicit failure_streak(int64_t every = 30,
                          std::chrono::seconds interval = std::chrono::seconds{30});

  /// Counts one failure at `now`; true when this one should be logged.
  bool failed(time_point now = clock_type::now());

  /// Ends the run; returns how many failures it had.
  int64_t succeeded();

  /// Failures in the current run (0 after a success).
  int64_t count() const { return count_; }

  /// The reconnect delay after the failures so far (backoff_delay).
  std::chrono::milliseconds backoff(std::chrono::milliseconds cap) const;

  /// When the current run's first failure happened.
  time_point since() const { return since_; }

private:
  int64_t every_;
  std::chrono::seconds interval_;
  int64_t count_ = 0;
  int64_t logged_at_count_ = 0;
  time_point since_{}, logged_at_{};
};

} // namespace outbox
