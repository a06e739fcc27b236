// The run's report from the outside: its knobs, taken from the command line
// before the phases, and at the end the table printed and the JSON written.
#pragma once

#include <caf/error.hpp>

#include "tools/benchmark/bench_args.hpp"
#include "tools/benchmark/report.hpp"

namespace outbox::bench {

/// A report with the run's knobs and nothing measured yet.
report knobs_of(const bench_config& o);

/// Prints the table to stdout and writes the JSON to --json.
caf::error write_results(const bench_config& o, const report& rep);

} // namespace outbox::bench
