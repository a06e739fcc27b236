// The C++ worker library on its own thread, against a test's queue, until
// destroyed.
#pragma once

#include <string>
#include <thread>

#include "tests/integration/test_services.hpp"
#include "worker/worker.hpp"

namespace outbox::testing {

struct running_worker {
  outbox::worker w;
  std::thread t;

  running_worker(const std::string& queue, handler_map handlers)
    : running_worker(amqp_url(), queue, std::move(handlers)) {
  }

  running_worker(const std::string& url, const std::string& queue,
                 handler_map handlers)
    : running_worker(worker_options{url, queue, 5}, std::move(handlers)) {
  }

  running_worker(worker_options opts, handler_map handlers) : w(std::move(opts)) {
    for (auto& [job, h] : handlers)
      w.handle(job, h);
    t = std::thread{[this] { w.run(); }};
  }

  ~running_worker() {
    w.stop();
    t.join();
  }
};

} // namespace outbox::testing
