// LISTEN on a channel over a connection of its own, and wait for
// notifications with a timeout (the router wakes on event inserts, the
// dispatchers on new deliveries). The listening can stop and start again
// on the same connection.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/stores.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

class pg_listener : public notice_listener {
public:
  /// Connects and runs LISTEN `channel`.
  static caf::expected<pg_listener> listen(const std::string& url,
                                           const std::string& channel);

  /// Waits up to `timeout`; returns how many notifications arrived (0 on
  /// timeout). errc::database_unavailable once the connection broke.
  caf::expected<int> wait(std::chrono::milliseconds timeout);

  /// As wait(), and returns the notifications' payloads, in arrival order.
  caf::expected<std::vector<std::string>>
  wait_payloads(std::chrono::milliseconds timeout) override;

  /// UNLISTEN: PostgreSQL stops signalling this session on every commit
  /// that notifies. A notification already received may still be read.
  caf::error pause();

  /// LISTEN again. Whatever committed while paused sent no notification.
  caf::error resume();

  bool paused() const { return paused_; }

  /// A factory for the actors: each call connects and listens anew.
  static notice_listener_factory factory(std::string url, std::string channel);

private:
  pg_listener(pg_connection conn, std::string channel)
    : conn_(std::move(conn)), channel_(std::move(channel)) {}
  caf::error set_listening(bool on);
  pg_connection conn_;
  std::string channel_;
  bool paused_ = false;
};

} // namespace outbox
