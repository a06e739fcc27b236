#include "worker/helper_thread.hpp"
#include <utility>

namespace outbox {

helper_thread::helper_thread() : thread_([this] { loop(); }) {
}

helper_thread::~helper_thread() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void helper_thread::run(const std::function<void()>& work,
                        const std::function<void()>& service,
                        std::chrono::milliseconds interval) {
  std::unique_lock<std::mutex> lock{mtx_};
  work_ = &work;
  done_ = false;
  failure_ = nullptr;
  cv_.notify_all();
  while (!cv_.wait_for(lock, interval, [this] { return done_; })) {
    lock.unlock();
    service();
    lock.lock();
  }
  if (auto e = std::exchange(failure_, nullptr))
    std::rethrow_exception(e);
}

void helper_thread::loop() {
  std::unique_lock<std::mutex> lock{mtx_};
  for (;;) {
    cv_.wait(lock, [this] { return quit_ || work_ != nullptr; });
    if (quit_)
      return;
    auto* work = std::exchange(work_, nullptr);
    lock.unlock();
    std::exception_ptr failure;
    try {
      (*work)();
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    failure_ = failure;
    done_ = true;
    cv_.notify_all();
  }
}

} // namespace outbox
