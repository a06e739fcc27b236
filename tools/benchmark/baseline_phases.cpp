#include "tools/benchmark/baseline_phases.hpp"

#include <chrono>
#include <iostream>
#include <vector>

#include "core/amqp/amqp_client.hpp"
#include "core/amqp/wire.hpp"
#include "core/base/errors.hpp"
#include "core/pg/pg_connection.hpp"
#include "tools/benchmark/contention.hpp"
#include "tools/benchmark/db_writes.hpp"
#include "tools/benchmark/machine_cpu.hpp"
#include "tools/benchmark/outbox_config.hpp"
#include "tools/benchmark/producers.hpp"

namespace outbox::bench {

caf::error producers_only(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  std::cerr << "A: producers only\n";
  auto writes_start = s.progress.sample_writes(db);
  if (!writes_start)
    return failed("reading the writes", writes_start.error());
  auto cpu_start = sample_cpu();
  auto a = produce(o.database_url, s.names, "bench.unrouted", s.payload,
                   static_cast<int>(o.producers), o.events, 0);
  rep.baseline_a = a.commits.size() / a.seconds;
  rep.a_cpu_per_1000 = per_1000(cpu_between(cpu_start, sample_cpu()), o.events);
  auto inserted = [&](const write_counters& w) {
    return w.events.inserted - writes_start->events.inserted >= o.events;
  };
  auto a_end = settled_writes(db, s.progress, inserted);
  if (!a_end)
    return failed("reading the writes", a_end.error());
  rep.a_writes = per_event(writes_between(*writes_start, a_end->counters), o.events,
                           a_end->settled);
  // Left unrouted, they would keep every later phase open.
  if (auto err = s.bulk.delete_unrouted(db, "bench.unrouted"))
    return failed("cleaning up A", err);
  return caf::none;
}

caf::error business_commits(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  std::cerr << "C: business commits, plain INSERT, publish and the C++ API at "
            << o.contention_clients << " clients, " << o.contention_seconds
            << " s of each\n";
  auto writes_start = s.progress.sample_writes(db);
  if (!writes_start)
    return failed("reading the writes", writes_start.error());
  contention_run run{o.database_url,      s.names, s.prefix + "plain",
                     "bench.unrouted",    s.payload,
                     *contention_clients(o.contention_clients),
                     o.contention_seconds};
  auto res = measure_contention(db, run);
  if (!res)
    return failed("C: business commits", res.error());
  for (auto& x : res->figures)
    std::cerr << "C: " << x.clients << " clients: " << x.plain_per_s
              << " plain/s, " << x.publish_per_s << " publish/s, ratio "
              << x.ratio << "; " << x.api_per_s << " api/s, ratio "
              << x.api_ratio << "\n";
  rep.contention = std::move(res->figures);
  auto counted = [&](const write_counters& w) {
    return w.events.inserted - writes_start->events.inserted >= res->published;
  };
  if (auto end = settled_writes(db, s.progress, counted); !end)
    return failed("reading the writes", end.error());
  if (auto err = s.bulk.delete_unrouted(db, "bench.unrouted"))
    return failed("cleaning up C", err);
  if (auto err = db.exec_script("vacuum", "VACUUM " + s.names.events))
    return failed("cleaning up C", err);
  if (auto err = s.bulk.settle(db))
    return failed("cleaning up C", err);
  return caf::none;
}

caf::error broker_only(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  std::cerr << "B: RabbitMQ only\n";
  auto conn = amqp_client::connect(o.amqp_url, "bench baseline");
  if (!conn)
    return failed("broker", conn.error());
  auto& amqp = *conn;
  auto q = s.prefix + "baseline";
  if (auto err = amqp->declare_queue(q))
    return failed("declaring the baseline queue", err);
  job_to_send j;
  j.delivery_id = 1;
  j.event_id = 1;
  j.job = bench_job(0);
  j.queue = q;
  j.dispatch_id = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c";
  j.event_type = "bench.event";
  j.payload = s.payload;
  j.content_type = "application/json";
  j.expiration_ms = 300000; // as the relay's, at the default timeout
  std::vector<outgoing_message> batch(500, job_message(j));
  auto start = std::chrono::steady_clock::now();
  int64_t sent = 0;
  while (sent < o.events) {
    for (auto x : amqp->publish_batch(batch, std::chrono::seconds{30}))
      sent += x == publish_status::confirmed;
    if (!amqp->is_open())
      return make_error(errc::broker_error,
                        "the broker closed the baseline connection");
  }
  rep.baseline_b = sent / seconds_since(start);
  rep.envelope_bytes = static_cast<int64_t>(batch[0].body.size());
  amqp->delete_queue(q);
  return caf::none;
}

} // namespace outbox::bench
