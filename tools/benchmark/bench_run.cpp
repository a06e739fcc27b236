#include "tools/benchmark/bench_run.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "core/amqp/amqp_client.hpp"
#include "core/amqp/wire.hpp"
#include "core/base/errors.hpp"
#include "core/config/config.hpp"
#include "core/pg/migrations.hpp"
#include "core/pg/pg_connection.hpp"
#include "tools/benchmark/outbox_config.hpp"

namespace outbox::bench {

namespace {

std::string make_payload(int64_t bytes) {
  std::string filler(static_cast<size_t>(std::max<int64_t>(bytes - 12, 1)), 'x');
  return "{\"data\":\"" + filler + "\"}";
}

// A relay's config file at `path`, with `retention_minutes` of built-in
// retention (0: none); false (and a message) when it cannot be made.
bool write_config(const bench_config& o, const setup& s, const std::string& path,
                  double retention_minutes = 0) {
  outbox_knobs k{o.database_url, o.amqp_url, s.names, o.batch_size,
                 o.router_linger_ms, o.router_linger_min_events,
                 !o.polling_only, o.routes, s.queues, o.ordered_keys,
                 retention_minutes};
  auto text = outbox_config_json(k);
  std::ofstream out{path};
  if (text)
    out << *text << "\n";
  out.close();
  if (text && out)
    return true;
  std::cerr << "outbox_bench: cannot write the relay's config "
            << path << ": "
            << (text ? std::string{"a write failed"} : render(text.error()))
            << "\n";
  return false;
}

// Writes a relay's config at `path` and reads it back: the knobs that end
// up in it (batch size, linger, the soak's retention) are checked by the
// config's own rules. None (and a message) when it fails.
std::optional<config> checked_config(const bench_config& o, const setup& s,
                                     const std::string& path,
                                     double retention_minutes = 0) {
  if (!write_config(o, s, path, retention_minutes))
    return std::nullopt;
  auto cfg = load_config(path);
  if (cfg)
    return std::move(*cfg);
  std::cerr << "outbox_bench: a knob is out of range for the outbox config: "
            << render(cfg.error()) << "\n";
  if (retention_minutes > 0) // an outbox without built-in retention yet
    std::cerr << "outbox_bench: (--soak-retention-minutes 0 runs the soak"
                 " without retentionHours)\n";
  return std::nullopt;
}

} // namespace

std::optional<int> prepare(const bench_config& o, setup& s) {
  for (int64_t q = 0; q < o.queues; ++q)
    s.queues.push_back(s.prefix + "q" + std::to_string(q));
  s.payload = make_payload(o.payload_bytes);
  auto cfg = checked_config(o, s, s.config_path);
  bool soak_ok = cfg
                 && (o.soak <= 0
                     || checked_config(o, s, s.soak_config_path,
                                   o.soak_retention_minutes));
  if (!cfg || !soak_ok) {
    std::remove(s.config_path.c_str());
    std::remove(s.soak_config_path.c_str());
    return 2;
  }
  s.backlog_route = cfg->routes_for("bench.event").front();
  return std::nullopt;
}

leftovers::~leftovers() {
  if (auto db = pg_connection::connect(o.database_url))
    drop_schema(*db, s.names);
  if (auto amqp = amqp_client::connect(o.amqp_url, "bench cleanup")) {
    (*amqp)->delete_queue(s.prefix + "baseline");
    for (auto& q : s.queues) {
      (*amqp)->delete_queue(q);
      (*amqp)->delete_queue(results_queue(q));
    }
  }
  std::remove(s.config_path.c_str());
  std::remove(s.soak_config_path.c_str());
}

caf::error failed(const std::string& what, const caf::error& err) {
  if (err.category() != caf::atom("outbox"))
    return err;
  return make_error(static_cast<errc>(err.code()), what + ": " + context_of(err));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
    .count();
}

cpu_seconds per_1000(const cpu_seconds& used, int64_t events) {
  cpu_seconds out;
  for (auto& [group, seconds] : used)
    out[group] = seconds * 1000.0 / static_cast<double>(events);
  return out;
}

} // namespace outbox::bench
