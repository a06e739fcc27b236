// The seams between the actors and their I/O: what each pass needs from the
// database and the broker, as small abstract classes. The real ones live in
// core/pg/db_stores.hpp, core/pg/pg_listener.hpp and core/amqp/amqp_endpoints.hpp;
// tests use in-memory fakes.
// Every call may block: actors that own a real one run detached.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/broker_message.hpp"
#include "core/domain/delivery_passes.hpp"
#include "core/domain/routing_result.hpp"
#include "core/domain/status_counts.hpp"

namespace outbox {

/// The routing pass.
class routing_store {
public:
  virtual ~routing_store() = default;
  /// Routes up to `batch_size` events; deliveries of `handoff`'s queues
  /// may be inserted dispatched (core/domain/handoff.hpp).
  virtual caf::expected<routing_result>
  route_batch(int32_t batch_size, const std::vector<handoff_queue>& handoff) = 0;
};

/// The dispatch, result and timeout passes over deliveries.
class delivery_store {
public:
  virtual ~delivery_store() = default;
  /// See claim_repository::claim_batch. The claimer keeps the cursor: it
  /// passes the `resume` of its previous claim as `request.from`.
  virtual caf::expected<claim_result>
  claim_batch(const claim_request& request) = 0;
  virtual caf::expected<apply_result>
  apply_results(const std::vector<send_result>& rs) = 0;
  /// See sweep_repository::sweep.
  virtual caf::expected<sweep_result> sweep(const sweep_request& request) = 0;
  /// The job messages of deliveries a router handed to this dispatcher
  /// (core/domain/handoff.hpp), those still dispatched with the handed
  /// dispatch id; nothing is written.
  virtual caf::expected<claim_result>
  fetch_handed(const std::vector<handed_delivery>& ds) = 0;
  /// Makes handed deliveries that were not published pending again, ready
  /// at once and with no attempt counted: the dispatcher could not publish.
  /// Returns how many it changed.
  virtual caf::expected<int64_t>
  release_handed(const std::vector<handed_delivery>& ds) = 0;
};

/// The read-only counts of the status view.
class status_store {
public:
  virtual ~status_store() = default;
  virtual caf::expected<status_counts> read() = 0;
};

/// Publishes job messages with confirms.
class job_publisher {
public:
  virtual ~job_publisher() = default;
  /// Connects if needed; an error means nothing may be claimed yet.
  virtual caf::error ready() = 0;
  /// One status per message, in order (see amqp_client::publish_batch).
  virtual std::vector<publish_status>
  publish(const std::vector<outgoing_message>& ms) = 0;
  /// True while the broker blocks publishing (a resource alarm), as last
  /// seen by ready() or publish(): nothing should be claimed meanwhile.
  virtual bool blocked() const = 0;
  /// How many workers' results wait unread in the queue's results queue
  /// (a result handler that falls behind, or none that reads).
  virtual caf::expected<int64_t> results_waiting() = 0;
};

/// Hands out result messages, acked only once they are applied.
class result_source {
public:
  virtual ~result_source() = default;
  /// Waits up to `wait` for the first message, then takes what is already
  /// there, up to `max`.
  virtual caf::expected<std::vector<incoming_message>>
  fetch(size_t max, std::chrono::milliseconds wait) = 0;
  /// Acks every fetched message up to and including `tag`.
  virtual caf::error ack_through(uint64_t tag) = 0;
};

/// Where a queue shared by several databases puts the results of one
/// database that could not take them (it is down): a queue of that
/// database's own, drained by a result handler of that database alone, so
/// that the other databases' results are not held behind them.
class result_parker {
public:
  virtual ~result_parker() = default;
  /// Publishes `results` to `database`'s queue of parked results, with
  /// confirms; an error when the broker did not confirm them all.
  virtual caf::error park(const std::string& database,
                          const std::vector<send_result>& results) = 0;
};

/// The notifications of one channel (the deliveries' ready channel), over a
/// connection of its own.
class notice_listener {
public:
  virtual ~notice_listener() = default;
  /// Waits up to `timeout`; returns the payloads that arrived, in arrival
  /// order (none on timeout). An error once the connection broke: the
  /// listener is then of no further use.
  virtual caf::expected<std::vector<std::string>>
  wait_payloads(std::chrono::milliseconds timeout) = 0;
};

/// Connects a new listener (LISTEN done), or says why it could not.
using notice_listener_factory
  = std::function<caf::expected<std::unique_ptr<notice_listener>>()>;

} // namespace outbox
