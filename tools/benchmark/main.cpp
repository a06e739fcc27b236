// outbox_bench: how close the outbox runs to this machine's PostgreSQL and
// RabbitMQ, measured in one run (docs/performance.md). Phases:
//   A  producers only (the producer API, no relay): events/s
//   C  business commits (no relay): a plain INSERT into a lean table and
//      the publish call, each its own transaction, at 4 and 16 clients:
//      commits/s of each and publish ÷ plain
//   B  RabbitMQ only (persistent, confirms, pipelined): messages/s
//   pipeline  producers + outboxd + workers: routed/dispatched/completed per s
//   latency   at a fixed share of A: commit→published, commit→completed
//   I  idle start, on the latency phase's relay: one event after each of
//      K quiet spells (60 s by default): commit→published, →completed
//   resources of outboxd: peak RSS, CPU seconds per 1,000 deliveries
//   backlog   N pending deliveries drained: first vs last 10%
//   soak      (--soak MINUTES) half of A for minutes, sampled every
//             interval: throughput, p99, the tables' size and dead tuples
// Tables and queues are its own (prefix bench_<pid>_) and dropped after.
// This file: the command line and the order of the phases; each phase has
// a file of its own (baseline_phases.cpp and *_phase.cpp).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/pg/db_stores.hpp"
#include "core/pg/migrations.hpp"
#include "core/pg/pg_connection.hpp"
#include "tools/benchmark/backlog_phase.hpp"
#include "tools/benchmark/baseline_phases.hpp"
#include "tools/benchmark/bench_args.hpp"
#include "tools/benchmark/many_databases.hpp"
#include "tools/benchmark/bench_run.hpp"
#include "tools/benchmark/pipeline_phase.hpp"
#include "tools/benchmark/run_report.hpp"
#include "tools/benchmark/soak_phase.hpp"

using namespace outbox;
using namespace outbox::bench;

namespace {

// The phases in their order. An exit code when the knobs make no config
// the outbox takes, else an error when a step failed.
caf::expected<int> run(const bench_config& o) {
  set_log_level("warn");
  setup s;
  if (auto code = prepare(o, s))
    return *code;
  leftovers cleanup{o, s};
  auto db = pg_connection::connect(o.database_url);
  if (!db)
    return failed("database", db.error());
  if (auto migrated = migrate(*db, s.names); !migrated)
    return failed("migrating", migrated.error());
  if (!o.schema_sql.empty()) {
    std::ifstream in{o.schema_sql};
    std::stringstream text;
    text << in.rdbuf();
    if (!in)
      return make_error(errc::config_unreadable,
                        "--schema-sql " + o.schema_sql + ": could not be read");
    if (auto err = db->exec_script("schema_sql", fill_names(text.str(), s.names)))
      return failed("--schema-sql " + o.schema_sql, err);
  }
  auto watch = pg_connection::connect(o.database_url);
  if (!watch)
    return failed("database", watch.error());
  if (auto err = watch->exec_script("watch_settings", index_only_plan_settings))
    return failed("database", err);
  auto rep = knobs_of(o);
  rep.soak_only = o.soak_only;
  rep.contention_only = o.contention_only;
  run_context c{o, s, *db, *watch, rep};
  if (!o.contention_only)
    if (auto err = producers_only(c))
      return err;
  if (runs_contention(o))
    if (auto err = business_commits(c))
      return err;
  if (!o.soak_only && !o.contention_only) {
    if (auto err = broker_only(c))
      return err;
    if (auto err = pipeline_and_latency(c))
      return err;
    if (o.backlog > 0)
      if (auto err = backlog_drains(c))
        return err;
  }
  if (o.soak > 0)
    if (auto err = soak(c))
      return err;
  if (auto err = write_results(o, rep))
    return err;
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  bench_config o;
  auto usage = [](const std::string& what) {
    std::cerr << "outbox_bench: " << what << "\n";
    return 2;
  };
  if (auto err = o.parse_args(argc, argv); !err.empty())
    return usage(err);
  if (o.answered_help("outbox_bench",
                      std::string{"usage: outbox_bench --database-url URL "
                                  "--amqp-url URL [knobs]\n\nThe benchmark "
                                  "behind tools/bench (docs/performance.md)."
                                  "\n\noptions:\n"}
                        + o.options_text({})))
    return 0;
  if (o.database_url.empty() || o.amqp_url.empty())
    return usage("--database-url and --amqp-url are required (tools/bench sets them)");
  if (auto problem = knob_problem(o); !problem.empty())
    return usage(problem);
  if (auto problem = output_path_problem("json", o.json_file); !problem.empty())
    return usage(problem);
  if (o.soak > 0)
    if (auto problem = output_path_problem("soak-chart", o.soak_chart);
        !problem.empty())
      return usage(problem);
  if (!o.schema_sql.empty()
      && (!std::filesystem::is_regular_file(o.schema_sql)
          || access(o.schema_sql.c_str(), R_OK) != 0))
    return usage("--schema-sql = \"" + o.schema_sql + "\": cannot read it");
  if (o.outboxd.empty()) {
    std::string self = argv[0];
    o.outboxd = self.substr(0, self.rfind('/') + 1) + "outboxd";
  }
  // Phases M and Z run alone, on databases of their own.
  if (o.databases > 0 || o.idle_databases > 0)
    return run_many_databases(o);
  auto code = run(o);
  if (!code) {
    std::cerr << "outbox_bench: " << render(code.error()) << "\n";
    return 1;
  }
  return *code;
}
