#include "http/newest_first_queue.hpp"

namespace outbox {

newest_first_queue::newest_first_queue(size_t threads) {
  for (size_t i = 0; i < threads; ++i)
    threads_.emplace_back([this] { work(); });
}

newest_first_queue::~newest_first_queue() {
  shutdown();
}

void newest_first_queue::enqueue(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    waiting_.push_back(std::move(fn));
  }
  wake_.notify_one();
}

void newest_first_queue::shutdown() {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (stopping_)
      return;
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_)
    t.join();
}

void newest_first_queue::work() {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lock{mutex_};
      wake_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
      // On shutdown the waiting connections are still served (each task
      // closes its socket), then the thread ends.
      if (waiting_.empty())
        return;
      fn = std::move(waiting_.back());
      waiting_.pop_back();
    }
    fn();
  }
}

} // namespace outbox
