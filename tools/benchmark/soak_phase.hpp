// The soak as run (its figures: soak.hpp): paced producers at half of A
// for --soak minutes on a relay of its own, its tables sampled every
// interval; its chart written at the end.
#pragma once

#include <caf/error.hpp>

#include "tools/benchmark/bench_run.hpp"

namespace outbox::bench {

// Soak: paced producers at half of A for --soak minutes, on a relay of its
// own (its config has the soak's retention window) and workers; a sample
// of the tables every interval, the latencies by commit interval after.
caf::error soak(run_context& c);

} // namespace outbox::bench
