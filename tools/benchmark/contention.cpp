#include "tools/benchmark/contention.hpp"

#include <atomic>
#include <chrono>
#include <thread>

#include "core/pg/pg_connection.hpp"
#include "core/producer/event_store.hpp"

namespace outbox::bench {

namespace {

using steady = std::chrono::steady_clock;

/// Each kind runs in slices of a second, alternating, rather than all of
/// one kind and then all of the others: on a shared machine the rate
/// drifts over seconds (other work, a checkpoint, an autovacuum), and the
/// slices go plain, publish, api, api, publish, plain, plain, ... so that
/// a drift over the run falls on every kind alike (a linear one cancels
/// at every second round). The connections stay open across slices: only
/// the statements run in them.
constexpr auto slice = std::chrono::seconds{1};

/// The plain insert, the SQL publish function, and the C++ API's insert
/// (db_event_store with insert_statement::prepared).
enum class kind { plain, publish, api };
constexpr kind kinds[] = {kind::plain, kind::publish, kind::api};

struct statements {
  std::string plain, publish, api;
  pg_params params, api_params;

  caf::expected<pg_rows> run(pg_connection& conn, kind k) const {
    // Autocommit: each statement is its own transaction, committed (the
    // WAL flushed) when the call returns. Prepared: parsed and planned
    // once per connection, as an application's statements would be.
    switch (k) {
      case kind::plain:
        return conn.exec_prepared("contention_plain_insert", plain, params);
      case kind::publish:
        return conn.exec_prepared("contention_publish", publish, params);
      case kind::api:
        break;
    }
    return conn.exec_prepared("contention_api", api, api_params);
  }
};

// The kind of slice `i`: plain, publish, api, then backwards, and so on.
kind kind_of_slice(int64_t i) {
  auto round = i / 3, at = i % 3;
  return kinds[round % 2 == 0 ? at : 2 - at];
}

struct slice_result {
  int64_t commits = 0;
  double seconds = 0;
};

// One slice: every connection commits `k` back to back until the slice
// ends (each finishes the transaction it is in, and the slice's time
// includes it). The first error, if any, ends the phase.
caf::expected<slice_result> run_slice(std::vector<pg_connection>& conns,
                                      const statements& sql, kind k) {
  std::atomic<bool> stop{false};
  std::vector<int64_t> commits(conns.size(), 0);
  std::vector<caf::error> errors(conns.size());
  auto start = steady::now();
  std::vector<std::thread> threads;
  for (size_t i = 0; i < conns.size(); ++i)
    threads.emplace_back([&, i] {
      while (!stop.load(std::memory_order_relaxed)) {
        auto done = sql.run(conns[i], k);
        if (!done) {
          errors[i] = done.error();
          return;
        }
        ++commits[i];
      }
    });
  std::this_thread::sleep_until(start + slice);
  stop = true;
  for (auto& t : threads)
    t.join();
  slice_result out;
  out.seconds = std::chrono::duration<double>(steady::now() - start).count();
  for (size_t i = 0; i < conns.size(); ++i) {
    if (errors[i])
      return errors[i];
    out.commits += commits[i];
  }
  return out;
}

// Both kinds at one client count: `n` connections, a warm-up statement of
// each kind on each (it prepares them: the first call of a connection
// also parses and plans), then `seconds` slices of each kind, alternated.
caf::expected<contention_figures> at_clients(const contention_run& run,
                                             const statements& sql, int64_t n,
                                             int64_t& published) {
  std::vector<pg_connection> conns;
  for (int64_t i = 0; i < n; ++i) {
    auto conn = pg_connection::connect(run.url);
    if (!conn)
      return conn.error();
    conns.push_back(std::move(*conn));
  }
  for (auto& conn : conns)
    for (auto k : kinds) {
      if (auto done = sql.run(conn, k); !done)
        return done.error();
      published += k != kind::plain;
    }
  slice_result sums[3];
  for (int64_t i = 0; i < 3 * run.seconds; ++i) {
    auto k = kind_of_slice(i);
    auto r = run_slice(conns, sql, k);
    if (!r)
      return r.error();
    auto& sum = sums[static_cast<int>(k)];
    sum.commits += r->commits;
    sum.seconds += r->seconds;
    if (k != kind::plain)
      published += r->commits;
  }
  auto rate = [&](kind k) {
    auto& s = sums[static_cast<int>(k)];
    return s.seconds > 0 ? s.commits / s.seconds : 0.0;
  };
  contention_figures out;
  out.clients = n;
  out.plain_per_s = rate(kind::plain);
  out.publish_per_s = rate(kind::publish);
  out.api_per_s = rate(kind::api);
  out.ratio = out.plain_per_s > 0 ? out.publish_per_s / out.plain_per_s : 0;
  out.api_ratio = out.plain_per_s > 0 ? out.api_per_s / out.plain_per_s : 0;
  return out;
}

// Drops the lean table however the phase ends.
struct plain_table {
  pg_connection& admin;
  const std::string& name;
  ~plain_table() {
    (void) admin.exec_script("contention_drop", "DROP TABLE IF EXISTS " + name);
  }
};

} // namespace

std::optional<std::vector<int64_t>> contention_clients(const std::string& text) {
  std::vector<int64_t> out;
  size_t at = 0;
  for (;;) {
    auto end = text.find(',', at);
    auto item = text.substr(at, end == std::string::npos ? std::string::npos
                                                          : end - at);
    if (item.empty() || item.size() > 2
        || item.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    auto n = std::stoll(item);
    if (n < 1 || n > max_contention_clients)
      return std::nullopt;
    out.push_back(n);
    if (end == std::string::npos)
      return out;
    at = end + 1;
  }
}

caf::expected<contention_results> measure_contention(pg_connection& admin,
                                                     const contention_run& run) {
  // As lean as a business table gets: a key, the same two values, a
  // timestamp; no trigger, no other index.
  if (auto err = admin.exec_script(
        "contention_table",
        "CREATE TABLE " + run.plain_table
          + " (id bigserial PRIMARY KEY, type text NOT NULL,"
            " payload jsonb NOT NULL,"
            " created_at timestamptz NOT NULL DEFAULT now())"))
    return err;
  plain_table dropped{admin, run.plain_table};
  statements sql{"INSERT INTO " + run.plain_table
                   + " (type, payload) VALUES ($1, $2)",
                 "SELECT " + run.names.publish_function + "($1, $2)",
                 db_event_store::insert_sql(run.names),
                 {run.event_type, run.payload},
                 {run.event_type, run.payload, std::nullopt, std::nullopt,
                  std::nullopt, std::nullopt, std::string{"application/json"}}};
  contention_results out;
  for (auto n : run.clients) {
    auto figures = at_clients(run, sql, n, out.published);
    if (!figures)
      return figures.error();
    out.figures.push_back(*figures);
  }
  return out;
}

} // namespace outbox::bench
