// LISTEN on a channel over a connection of its own, and wait for
// notifications with a timeout (the router wakes on event inserts).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "core/pg_connection.hpp"

namespace outbox {

class pg_listener {
public:
  /// Connects and runs LISTEN `channel`.
  static caf::expected<pg_listener> listen(const std::string& url,
                                           const std::string& channel);

  /// Waits up to `timeout`; returns how many notifications arrived (0 on
  /// timeout). errc::database_unavailable once the connection broke.
  caf::expected<int> wait(std::chrono::milliseconds timeout);

private:
  explicit pg_listener(pg_connection conn) : conn_(std::move(conn)) {}
  pg_connection conn_;
};

} // namespace outbox
