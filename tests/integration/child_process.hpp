// Starts the outbox binaries as real child processes for the multi-node
// tests: output to a log file, signals on demand, exit status on wait.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace outbox::testing {

class child_process {
public:
  /// Starts `path args...` with stdout and stderr appended to `log_file`.
  /// OUTBOX_DATABASE_URL/OUTBOX_AMQP_URL are unset: the config file rules.
  child_process(const std::string& path, const std::vector<std::string>& args,
                const std::string& log_file);
  ~child_process(); ///< kills the child if it still runs

  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  void signal(int sig);

  /// Waits for the exit; the exit code, or 128 + signal, or -1 on timeout.
  int wait(int timeout_seconds = 30);

  bool running() const { return pid_ > 0; }

private:
  pid_t pid_ = -1;
};

/// A TCP port on 127.0.0.1 that was free a moment ago.
uint16_t free_port();

/// Runs a command and returns its exit code and output (stdout+stderr).
std::pair<int, std::string> run_command(const std::string& cmd);

} // namespace outbox::testing
