#include "tools/benchmark/db_writes.hpp"

#include <chrono>
#include <thread>

namespace outbox::bench {

write_figures per_event(const write_counters& w, int64_t events, bool settled) {
  auto n = static_cast<double>(events > 0 ? events : 1);
  auto d = [n](int64_t x) { return static_cast<double>(x) / n; };
  return {settled,                  d(w.wal_bytes),           d(w.events.inserted),
          d(w.events.updated),      d(w.events.hot_updated),
          d(w.deliveries.inserted), d(w.deliveries.updated),
          d(w.deliveries.hot_updated), d(w.deliveries.deleted),
          d(w.completed.inserted)};
}

caf::expected<settled_counters>
settled_writes(pg_connection& conn, progress_repository& progress,
               const std::function<bool(const write_counters&)>& caught_up) {
  auto first = progress.sample_writes(conn);
  if (!first)
    return first.error();
  auto wal = first->wal_bytes;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds{25};
  auto last = *first;
  while (!caught_up(last) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds{200});
    auto next = progress.sample_writes(conn);
    if (!next)
      return next.error();
    last = *next;
  }
  last.wal_bytes = wal;
  return settled_counters{last, caught_up(last)};
}

} // namespace outbox::bench
