// The phases without a relay: A (producers only), C (business commits,
// plain INSERT against publish) and B (RabbitMQ only).
#pragma once

#include <caf/error.hpp>

#include "tools/benchmark/bench_run.hpp"

namespace outbox::bench {

// A: producers only (events of a type without routes: nobody routes them).
caf::error producers_only(run_context& c);

// C: business commits, plain INSERT against publish (contention.hpp). Like
// A, no relay runs and the events are of a type without routes; they are
// deleted after. It runs on the outbox tables as A leaves them, nearly
// empty as the lean table is, and leaves them so for the pipeline: the
// statistics have counted its inserts (the pipeline's writes per event
// would otherwise take in C's late reports), the deleted rows are vacuumed
// and its WAL checkpointed (an autovacuum or a checkpoint falling into the
// pipeline instead).
caf::error business_commits(run_context& c);

// B: RabbitMQ only, the job envelope's size, pipelined confirms.
caf::error broker_only(run_context& c);

} // namespace outbox::bench
