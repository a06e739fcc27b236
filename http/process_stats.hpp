// What the process costs, read from /proc/self for the process_* metrics.
#pragma once

#include <cstdint>

namespace outbox {

struct process_stats {
  double resident_bytes = 0;
  double cpu_seconds = 0;      ///< user + system
  double open_fds = 0;
  double start_time_seconds = 0; ///< Unix time the process started
};

/// Zeros for what cannot be read (no /proc).
process_stats read_process_stats();

} // namespace outbox
