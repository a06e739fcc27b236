// The pipeline and latency phases, on one relay: producers, outboxd and
// workers at full speed, then paced at a share of A; the relay's
// resources over both, and phase I on the same relay after.
#pragma once

#include <caf/error.hpp>

#include "tools/benchmark/bench_run.hpp"

namespace outbox::bench {

// Pipeline and latency share one relay, whose resources they report; with
// --scrape-interval-ms, scraped all along as Prometheus would. Phase I
// follows on the same relay once the scraper has stopped and the relay's
// resources are read: its quiet minutes count in neither.
caf::error pipeline_and_latency(run_context& c);

} // namespace outbox::bench
