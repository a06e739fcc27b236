#include "actors/status_counts.hpp"

#include <cstdio>

#include "core/base/errors.hpp"

namespace outbox {

counts_reader_actor::behavior_type
counts_reader(counts_reader_actor::pointer, std::string database,
              std::shared_ptr<status_store> store) {
  return {
    [database, store](status_atom) {
      database_status out;
      out.name = database;
      if (auto counts = store->read()) {
        out.ok = true;
        out.counts = std::move(*counts);
      } else {
        out.error = render(counts.error());
      }
      return out;
    },
  };
}

namespace {

std::string seconds_text(int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(ms) / 1000.0);
  return buf;
}

} // namespace

database_status counts_cache::shown(const std::string& name, int64_t asked_ms,
                                    int64_t now_ms) const {
  if (fresh_for(asked_ms) || (last && !reading))
    return *last;
  auto took = last_ended_ms - last_started_ms;
  auto running = now_ms - reading_since_ms;
  // A read that ended after the ask, or a database that counts about as
  // slowly as it did last time (a big table): its last counts.
  if (last && (last_ended_ms >= asked_ms || running < 3 * took))
    return *last;
  database_status out;
  out.name = name;
  out.error = "reading its counts has taken " + seconds_text(running)
              + " s so far: the database is slow or unreachable";
  return out;
}

} // namespace outbox
