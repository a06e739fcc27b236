#include "tools/benchmark/run_report.hpp"

#include <fstream>
#include <iostream>

#include "core/base/errors.hpp"
#include "tools/benchmark/bench_run.hpp"

namespace outbox::bench {

report knobs_of(const bench_config& o) {
  report rep;
  rep.knobs = {o.events,      o.producers,   o.payload_bytes, o.queues,
               o.routes,      o.batch_size,  o.dispatchers,   o.workers,
               o.backlog,     o.latency_events, o.router_linger_ms,
               o.router_linger_min_events, o.scrape_interval_ms,
               o.ordered_keys,
               runs_contention(o) ? o.contention_clients : "",
               runs_contention(o) ? o.contention_seconds : 0,
               o.cluster + (o.polling_only ? " polling-only" : "")
                 + (o.tls_dir.empty() ? "" : " tls"),
               o.schema_sql};
  return rep;
}

caf::error write_results(const bench_config& o, const report& rep) {
  std::cout << rep.table();
  auto text = rep.json();
  if (!text)
    return failed("the results cannot be written as JSON", text.error());
  std::ofstream json{o.json_file};
  json << *text << "\n";
  json.close();
  if (!json)
    return make_error(errc::serialize_failed,
                      "the results could not be written to " + o.json_file);
  std::cout << "results written to " << o.json_file << "\n";
  return caf::none;
}

} // namespace outbox::bench
