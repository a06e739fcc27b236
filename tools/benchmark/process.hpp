// A child process of the benchmark (outboxd) and what it cost: peak RSS
// and CPU seconds, read from /proc before it is stopped.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace outbox::bench {

class process {
public:
  process(const std::string& path, const std::vector<std::string>& args,
          const std::string& log_file);
  ~process(); ///< SIGTERM, wait, SIGKILL if needed

  /// Peak resident set size in MiB (VmHWM).
  double peak_rss_mib() const;

  /// User + system CPU seconds so far.
  double cpu_seconds() const;

  /// Stops it with SIGTERM and waits; returns its exit code.
  int stop();

private:
  pid_t pid_ = -1;
};

} // namespace outbox::bench
