// The HTTP endpoint's threads: cpp-httplib hands each accepted connection
// to a task queue, and its own ThreadPool serves them first come, first
// served, so a flood of idle connections would make a fresh request wait
// behind all of them. This queue serves the newest connection first: a
// scrape or a health check made during a flood waits only for the next
// thread to come free (an idle connection holds one for the keep-alive
// timeout at most), while the flood's older connections wait or are
// given up by their clients.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

namespace outbox {

class newest_first_queue : public httplib::TaskQueue {
public:
  /// `threads` serve at once. Waiting connections are bounded only by the
  /// process's file descriptors (outboxd raises their limit at start, see
  /// raise_fd_limit): a task holds a socket that only running it closes.
  explicit newest_first_queue(size_t threads);
  ~newest_first_queue() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> waiting_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

} // namespace outbox
