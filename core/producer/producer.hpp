// The producer API with direct publish. Event types the outbox handles are
// added to the caller's transaction (db_event_store); the others (config
// `enabled: false`, OUTBOX_ENABLED=false, or an `except` pattern such as
// "metrics.*") go straight to RabbitMQ, one job message per route, as if
// there were no outbox: for messages worthless a moment later, where a
// failure should reach the caller rather than be retried.
#pragma once

#include <chrono>
#include <memory>
#include <random>
#include <string>

#include "core/amqp/amqp_session.hpp"
#include "core/config/config.hpp"
#include "core/producer/event_store.hpp"

namespace outbox {

class producer : public event_store {
public:
  /// Connects to RabbitMQ only when the first direct event comes.
  explicit producer(config cfg, std::chrono::milliseconds confirm_timeout
                                = std::chrono::seconds{5});
  ~producer() override;

  /// An outbox event: db_event_store::add on `conn` (the event id).
  /// A direct one: validated, then published to every route's queue with
  /// confirms before this returns, and 0; `conn` is not touched (it may be
  /// null) and the caller's transaction has no part in it. Errors:
  /// errc::invalid_event, errc::broker_unavailable (nothing could be sent),
  /// errc::publish_failed (naming the queue that did not take it; routes
  /// that did take theirs keep them, as with any message broker).
  caf::expected<int64_t> add(pg_conn* conn, const event& ev) override;

  /// Hands `stored` events of the outbox path to `f` (db_event_store::observe).
  void observe(lifecycle_observer f) { store_.observe(std::move(f)); }

private:
  caf::expected<int64_t> publish_directly(const event& ev);
  /// The direct messages of `ev`, one per route whose time is not over.
  std::vector<outgoing_message> direct_messages(const event& ev);
  std::string next_message_id();

  config cfg_;
  std::chrono::milliseconds confirm_timeout_;
  db_event_store store_;
  /// Connects only when the first direct event comes; declares each
  /// route's queue when it is first published to.
  amqp_session session_;
  std::mt19937_64 rng_;
};

} // namespace outbox
