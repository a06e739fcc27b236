// A PostgreSQL and a RabbitMQ of one fault test alone (tools/lib/services.sh
// under a temp dir), so that the test may stop and restart them while the
// other tests keep the shared servers. Constructed first, it points the
// OUTBOX_TEST_* variables of this process (one CTest entry) at them, so the
// integration fixtures work on them unchanged.
#pragma once

#include <string>

namespace outbox::testing {

class private_services {
public:
  /// `broker_heartbeat_seconds` > 0: the heartbeat the broker proposes.
  explicit private_services(int broker_heartbeat_seconds = 0);
  ~private_services();

  private_services(const private_services&) = delete;
  private_services& operator=(const private_services&) = delete;

  void stop_broker();
  void start_broker();
  /// Raises or clears a memory alarm of the broker: while it lasts the
  /// broker blocks publishers (connection.blocked).
  void broker_memory_alarm(bool on);
  void stop_database();
  void start_database();
  /// Stops the database as a crash would (pg_ctl -m immediate): its next
  /// start recovers from the WAL and empties the unlogged tables.
  void crash_database();

  /// The broker's log folder (its connection and heartbeat lines).
  std::string broker_log_dir() const { return dir_ + "/rabbitmq/log"; }

  /// The URL of the broker started above (OUTBOX_TEST_AMQP_URL as set).
  std::string broker_url() const;

  /// A second RabbitMQ node for a cluster of two: its ports are picked now
  /// and its URL returned; it starts and joins the first node's cluster in
  /// start_peer_broker(). Stopped by stop_peer_broker() or at the end.
  std::string reserve_peer_broker();
  void start_peer_broker();
  void stop_peer_broker();

private:
  // Runs `calls` after sourcing services.sh; fails the test if it fails.
  void shell(const std::string& calls);

  std::string dir_;
  std::string peer_dir_; ///< "" without a second node
};

} // namespace outbox::testing
