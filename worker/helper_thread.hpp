// One thread that runs the worker's handlers, so that the thread of
// worker::run() stays free to keep the broker connections alive while a
// handler takes its time: rabbitmq-c answers heartbeats only from inside
// its calls, and a connection silent for two heartbeat intervals is closed
// by the broker, which then hands the job to another worker. The thread
// lives as long as the worker: a batch costs two hand-overs, not a thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace outbox {

class helper_thread {
public:
  helper_thread();
  ~helper_thread();
  helper_thread(const helper_thread&) = delete;
  helper_thread& operator=(const helper_thread&) = delete;

  /// Runs `work` on the helper thread and, until it returns, `service` on
  /// the calling thread every `interval`; rethrows what `work` threw.
  void run(const std::function<void()>& work, const std::function<void()>& service,
           std::chrono::milliseconds interval);

private:
  void loop();

  std::mutex mtx_;
  std::condition_variable cv_;
  const std::function<void()>* work_ = nullptr;
  bool done_ = false;
  bool quit_ = false;
  std::exception_ptr failure_;
  std::thread thread_;
};

} // namespace outbox
