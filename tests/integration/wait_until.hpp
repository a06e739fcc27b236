// Waiting on a condition instead of for a time: the tests poll what they
// expect (a row count, a status view, a log line) until it holds or a
// deadline passes, so a slow machine makes them slower, not flaky.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace outbox::testing {

/// Polls `done` every 100 ms for up to `limit`; returns its last answer.
inline bool wait_until(std::function<bool()> done,
                       std::chrono::seconds limit = std::chrono::seconds{30}) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (done())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
  return done();
}

} // namespace outbox::testing
