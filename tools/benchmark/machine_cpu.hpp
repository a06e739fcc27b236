// Where the machine's CPU time goes during a phase of the benchmark: every
// process on the machine, grouped by what it is. The relay shares the CPUs
// with PostgreSQL and RabbitMQ, so its cost is its own CPU plus what it
// makes the servers do; this reads it from /proc instead of guessing.
#pragma once

#include <map>
#include <string>

namespace outbox::bench {

/// CPU seconds used so far, per group: "postgres" (every backend, plus the
/// ones that already exited, as the postmaster's reaped children),
/// "rabbitmq" (the Erlang VM), "outboxd", "bench" (this process: producers
/// and workers) and "other"; "machine" is the whole machine from /proc/stat.
using cpu_seconds = std::map<std::string, double>;

cpu_seconds sample_cpu();

/// later - earlier, per group.
cpu_seconds cpu_between(const cpu_seconds& earlier, const cpu_seconds& later);

} // namespace outbox::bench
