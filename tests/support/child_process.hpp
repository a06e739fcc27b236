// A child process of the tests and the benchmark (outboxd, workers): output
// appended to a log file, signals on demand, exit status on wait, and what
// it cost (peak RSS, CPU seconds) read from /proc while it runs.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace outbox {

class child_process {
public:
  /// Starts `path args...` with stdout and stderr appended to `log_file`,
  /// with signals unblocked. OUTBOX_DATABASE_URL/OUTBOX_AMQP_URL are unset
  /// (the config file the child is given rules), then `env`'s "NAME=value"
  /// entries are set: the way to hand a child a secret that its command
  /// line, readable by every user, must not show. The child gets SIGTERM
  /// when its parent dies, also without running this object's destructor
  /// (PR_SET_PDEATHSIG: when the *thread* that started it ends, so start
  /// children from a thread that outlives them).
  child_process(const std::string& path, const std::vector<std::string>& args,
                const std::string& log_file,
                const std::vector<std::string>& env = {});
  ~child_process(); ///< stop(), if it still runs

  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  void signal(int sig);

  /// The child's process id (-1 once reaped).
  pid_t pid() const { return pid_; }

  /// Waits for the exit; the exit code, or 128 + signal, or -1 on timeout.
  int wait(int timeout_seconds = 30);

  /// SIGTERM, then SIGKILL after 30 s; returns the exit status as wait().
  int stop();

  /// Whether it has exited (it is reaped then: stop() and wait() return -1).
  bool exited();

  /// Peak resident set size in MiB (VmHWM).
  double peak_rss_mib() const;

  /// User + system CPU seconds so far.
  double cpu_seconds() const;

private:
  pid_t pid_ = -1;
};

} // namespace outbox
