// What the process tests need besides tests/support/child_process.hpp: a free
// port, a command's output and a file's text.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "tests/support/child_process.hpp"
#include "tests/support/loopback_port.hpp"
#include <sys/types.h>
#include <vector>

namespace outbox::testing {

using outbox::child_process;

/// A TCP port on 127.0.0.1 that was free a moment ago.
uint16_t free_port();

/// A TCP connection to 127.0.0.1:`port`, left as it is (-1 if refused):
/// for tests that play a raw or misbehaving client.
int open_loopback_connection(uint16_t port);

/// Runs a command and returns its exit code and output (stdout+stderr).
std::pair<int, std::string> run_command(const std::string& cmd);

/// A file's whole text ("" when it cannot be read): a child's log, a
/// results file.
std::string read_file(const std::string& path);

/// Resident memory of process `pid` in KiB (from /proc), -1 if unknown.
long resident_kib(pid_t pid);

/// Checks that a command's run ended with `status` and said `text`.
void check_ends(const std::pair<int, std::string>& run, int status,
                const std::string& text);

} // namespace outbox::testing
