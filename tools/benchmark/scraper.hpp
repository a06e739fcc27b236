// What a Prometheus server costs the relay: a thread of the benchmark that
// GETs /metrics from each of the relay's nodes (outboxd --http) every N ms
// while the pipeline and latency phases run, as a scrape_interval of N ms
// would (docs/performance.md "The cost of scraping").
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace outbox::bench {

/// What the scrapes saw.
struct scrape_figures {
  int64_t scrapes = 0;  ///< GETs answered 200
  /// GETs not answered, or answered otherwise, by a node that had
  /// answered before (one still starting its endpoint is no failure),
  /// and one for each node that never answered.
  int64_t failures = 0;
  double mean_ms = 0;   ///< mean time of an answered GET
};

class scraper {
public:
  /// Scrapes 127.0.0.1:port/metrics for each of `ports`, one round every
  /// `interval` (the first at once), until destroyed or stop().
  scraper(std::vector<uint16_t> ports, std::chrono::milliseconds interval);
  ~scraper();

  scraper(const scraper&) = delete;
  scraper& operator=(const scraper&) = delete;

  /// Ends the thread and returns the figures.
  scrape_figures stop();

private:
  void run();
  void scrape_once(uint16_t port);

  std::vector<uint16_t> ports_;
  std::chrono::milliseconds interval_;
  std::mutex mtx_;
  std::condition_variable wake_;
  bool stopping_ = false;
  scrape_figures figures_;
  std::set<uint16_t> answered_; ///< ports that answered once
  double total_ms_ = 0;
  std::thread thread_;
};

} // namespace outbox::bench
