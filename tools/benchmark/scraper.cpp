#include "tools/benchmark/scraper.hpp"

#include <unistd.h>

#include <httplib.h>

namespace outbox::bench {

scraper::scraper(std::vector<uint16_t> ports, std::chrono::milliseconds interval)
  : ports_(std::move(ports)), interval_(interval), thread_([this] { run(); }) {
}

scraper::~scraper() {
  stop();
}

scrape_figures scraper::stop() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
  auto out = figures_;
  // A node that never answered is one failure, whenever it was asked.
  for (auto port : ports_)
    out.failures += answered_.count(port) == 0;
  out.mean_ms = out.scrapes > 0 ? total_ms_ / static_cast<double>(out.scrapes) : 0;
  return out;
}

void scraper::run() {
  // Rounds at fixed times, as Prometheus schedules them: a slow scrape
  // does not push the next one later.
  auto next = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock{mtx_};
  while (!stopping_) {
    lock.unlock();
    for (auto port : ports_)
      scrape_once(port);
    lock.lock();
    next += interval_;
    wake_.wait_until(lock, next, [this] { return stopping_; });
  }
}

void scraper::scrape_once(uint16_t port) {
  // A new connection per scrape: the dearer case (Prometheus may keep its
  // connection open between scrapes).
  httplib::Client c{"127.0.0.1", port};
  c.set_connection_timeout(2);
  c.set_read_timeout(5);
  auto start = std::chrono::steady_clock::now();
  auto res = c.Get("/metrics");
  double ms = std::chrono::duration<double, std::milli>(
                std::chrono::steady_clock::now() - start)
                .count();
  std::lock_guard<std::mutex> guard{mtx_};
  if (res && res->status == 200) {
    ++figures_.scrapes;
    total_ms_ += ms;
    answered_.insert(port);
  } else if (answered_.count(port)) {
    ++figures_.failures;
  }
}

} // namespace outbox::bench
