// What every phase of a benchmark run works with (its tables, queues,
// payload and relay configs, the connections and the report), and what it
// leaves behind, dropped however the run ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

#include <caf/error.hpp>

#include "core/domain/route.hpp"
#include "core/domain/schema_names.hpp"
#include "core/pg/bulk_repository.hpp"
#include "core/pg/progress_repository.hpp"
#include "tools/benchmark/bench_args.hpp"
#include "tools/benchmark/machine_cpu.hpp"
#include "tools/benchmark/report.hpp"

namespace outbox {
class pg_connection;
} // namespace outbox

namespace outbox::bench {

struct setup {
  std::string prefix = "bench_" + std::to_string(getpid()) + "_";
  schema_names names = schema_names{}.with_prefix(prefix);
  progress_repository progress{names};
  bulk_repository bulk{names};
  route backlog_route; ///< the first route: its job on the first queue
  std::vector<std::string> queues;
  std::string config_path = "/tmp/" + prefix + "config.json";
  /// The soak's relay's: the same, with the soak's retention window.
  std::string soak_config_path = "/tmp/" + prefix + "soak-config.json";
  std::string payload;
};

/// The run's queues, payload and relay configs; an exit code when the
/// knobs do not make a config the outbox takes (before any table is made).
std::optional<int> prepare(const bench_config& o, setup& s);

// Drops the run's tables, queues and config file however the run ends.
struct leftovers {
  const bench_config& o;
  const setup& s;
  ~leftovers();
};

// What every phase works with.
struct run_context {
  const bench_config& o;
  setup& s;
  pg_connection& db;    ///< bulk writes and the figures' reads
  pg_connection& watch; ///< the end of each phase, by index only
  report& rep;
};

// A failed step ends the run by returning its error, up to main: on the
// way the relay's processes and the workers stop, and `leftovers` drops
// what the run made.

/// `err` as the failure of the step `what`: the same code, with "what: "
/// before its context. (Every error the steps get is one of core/'s; any
/// other is passed on as it is.)
caf::error failed(const std::string& what, const caf::error& err);

double seconds_since(std::chrono::steady_clock::time_point start);

/// CPU seconds per 1,000 events, per group.
cpu_seconds per_1000(const cpu_seconds& used, int64_t events);

} // namespace outbox::bench
