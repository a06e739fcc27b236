#include "tools/benchmark/producers.hpp"

#include <chrono>
#include <mutex>
#include <thread>

#include "core/pg/pg_connection.hpp"
#include "core/producer/event_store.hpp"

namespace outbox::bench {

double now_seconds() {
  return std::chrono::duration<double>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

int64_t production::first_id() const {
  int64_t first = 0;
  for (auto& c : commits)
    if (first == 0 || c.event_id < first)
      first = c.event_id;
  return first;
}

production produce(const std::string& url, const schema_names& names,
                   const std::string& event_type, const std::string& payload,
                   int producers, int64_t total, double rate, int64_t keys,
                   const std::atomic<bool>* stop) {
  production out;
  std::mutex mtx;
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    int64_t mine = total / producers + (p < total % producers ? 1 : 0);
    threads.emplace_back([&, p, mine] {
      auto conn = pg_connection::connect(url);
      if (!conn) {
        std::lock_guard<std::mutex> guard{mtx};
        out.errors += mine;
        return;
      }
      db_event_store store{names};
      event ev;
      ev.event_type = event_type;
      ev.payload = payload;
      std::vector<commit> local;
      local.reserve(static_cast<size_t>(mine));
      int64_t errors = 0;
      // Paced producers share the rate; each sends on its own schedule.
      auto interval = rate > 0 ? std::chrono::duration<double>(producers / rate)
                               : std::chrono::duration<double>(0);
      auto next = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < mine && !(stop && *stop); ++i) {
        if (rate > 0) {
          std::this_thread::sleep_until(next);
          next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval);
        }
        if (keys > 0) // producer p writes events p, p + producers, ...
          ev.key = "k" + std::to_string((p + i * producers) % keys);
        auto id = in_transaction<int64_t>(*conn, [&] {
          return store.add(conn->native(), ev);
        });
        if (!id) {
          ++errors;
          continue;
        }
        local.push_back({*id, now_seconds()});
      }
      std::lock_guard<std::mutex> guard{mtx};
      out.commits.insert(out.commits.end(), local.begin(), local.end());
      out.errors += errors;
    });
  }
  for (auto& t : threads)
    t.join();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                              - start)
                  .count();
  return out;
}

} // namespace outbox::bench
