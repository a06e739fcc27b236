// The backlog phase: N pending deliveries drained by an outboxd started on
// them, then N more by the same outboxd, already running; deliveries/s of
// each drain by tenths.
#pragma once

#include <caf/error.hpp>

#include "tools/benchmark/bench_run.hpp"

namespace outbox::bench {

// Backlog: a relay started on it drains it, then the same relay drains a
// second one.
caf::error backlog_drains(run_context& c);

} // namespace outbox::bench
