// Phase I, the idle start, as run (its figures: idle_start.hpp): one event
// after each quiet spell, on the latency phase's relay and workers.
#pragma once

#include <caf/error.hpp>

#include "tools/benchmark/bench_run.hpp"
#include "tools/benchmark/cluster_processes.hpp"

namespace outbox::bench {

// I: idle start (idle_start.hpp), on the relay and workers of the latency
// phase once their figures are taken (the quiet minutes would count in
// its CPU per delivery). Before each sample nothing is written for
// --idle-seconds; then one event, one transaction through the producer
// API as the latency phase writes them, timed as it times them.
caf::error idle_start(run_context& c, relay& r, workers& w);

} // namespace outbox::bench
