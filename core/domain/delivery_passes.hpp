// What the dispatch, result and sweep passes ask of the deliveries table and
// get back: the requests and results of the delivery store
// (core/domain/stores.hpp), whatever implements it.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/domain/delivery.hpp"
#include "core/domain/in_flight_window.hpp"

namespace outbox {

/// Where a run of full batches of a queue left off: the ready index's key
/// (available_at, id) of the last delivery a claim took. A claim walks the
/// ready index from the start, past an entry for every delivery claimed
/// before it until a vacuum removes them: over a long drain that walk grew
/// to cost more than the claim. So while batches come back full, a claim
/// starts after this key. A delivery that becomes ready behind it meanwhile
/// (a claim of another dispatcher that rolled back, a routing transaction
/// that commits late) waits until a claim is not full: then the next starts
/// from the beginning again. Nothing is skipped for longer than a run of
/// full batches. The dispatcher keeps it between its claims.
struct claim_cursor {
  /// The database's text of the timestamptz, passed back as it came.
  std::string available_at = "-infinity";
  int64_t id = 0;

  bool at_start() const { return id == 0 && available_at == "-infinity"; }
};

struct claim_request {
  /// A max_in_flight that never binds (above any possible count of rows a
  /// test or tool makes).
  static constexpr int32_t no_limit = INT32_MAX;

  claim_request(std::string queue, int32_t batch_size,
                int32_t max_in_flight = no_limit, claim_cursor from = {})
    : queue(std::move(queue)), batch_size(batch_size),
      max_in_flight(max_in_flight), from(std::move(from)) {
  }

  std::string queue;
  int32_t batch_size = 100;
  /// Deliveries of the queue dispatched at once, counted in the database
  /// at the claim (concurrent claims may exceed it by up to a batch each).
  int32_t max_in_flight = no_limit;
  /// The `resume` of the previous claim of this queue; the start for none.
  claim_cursor from;
  /// The in-flight window's cohort (in_flight_window::cohort_start_us):
  /// the claim counts how many of it are still out.
  std::optional<int64_t> cohort_start_us;
};

struct claim_result {
  std::vector<job_to_send> jobs;
  int64_t expired = 0; ///< past their time to live: expired, never sent
  /// Made `failed` because the claim failed on them alone (quarantine).
  int64_t quarantined = 0;
  std::vector<delivery_transition> transitions; ///< those expiries and failures
  /// Seconds until the earliest pending delivery not claimed now becomes
  /// ready (a retry, say); nullopt when there is none.
  std::optional<double> next_ready_seconds;
  /// How many the queue's in-flight limit let this claim take (before it
  /// took them); nullopt when the claim did not say.
  std::optional<int64_t> room;
  /// The in-flight limit, not the batch size or the ready rows, cut this
  /// claim short: more may be waiting for results to free room.
  bool at_limit = false;
  /// Where the next claim of the queue starts (see claim_cursor).
  claim_cursor resume;
  /// What the claim saw for the in-flight window; nullopt when it did not
  /// say (with room).
  std::optional<window_sample> window;
  /// An operator paused the queue (`outboxctl pause`): the claim took
  /// nothing. `pause_ends_in_seconds` is set when the pause ends by itself.
  bool paused = false;
  std::optional<double> pause_ends_in_seconds;
};

struct apply_result {
  std::vector<result_verdict> verdicts; ///< one per input, same order
  int64_t completed = 0, retried = 0, failed = 0, expired = 0;
  /// Deliveries of ordered keys made ready because a hold ended.
  int64_t released = 0;
  /// Timed-out sends of ordered keys kept as late sends, holding their key
  /// (docs/ordering.md "A late send"), and late sends ended without a
  /// result.
  int64_t late_held = 0, late_ended = 0;
  std::vector<delivery_transition> transitions;
};

/// An outage of a queue's result handlers that has ended, relative to the
/// sweep's own now (so that no two clocks are compared).
struct queue_outage {
  std::string queue;
  double ended_seconds_ago = 0;
  double lasted_seconds = 0;
};

/// What the timeout sweep leaves alone (core/domain/relay_stalls.hpp).
struct sweep_holds {
  /// Queues whose deliveries do not time out now: no result handler of
  /// theirs is alive.
  std::vector<std::string> stalled;
  /// A delivery of such a queue that was out during one of these has its
  /// deadline moved by the part of the outage after its dispatch.
  std::vector<queue_outage> outages;
};

struct sweep_request {
  sweep_request(int32_t batch_size = 100) // NOLINT: a batch is a request
    : batch_size(batch_size) {
  }
  int32_t batch_size;
  sweep_holds holds;
};

struct sweep_result {
  int64_t timed_out = 0; ///< dispatched past delivery_timeout_at
  int64_t retried = 0, failed = 0;
  int64_t expired = 0;   ///< timed-out or pending ones past their TTL
  /// Deliveries of ordered keys made ready because a hold ended.
  int64_t released = 0;
  /// Timed-out sends of ordered keys kept as late sends, holding their key
  /// (docs/ordering.md "A late send"), and late sends ended without a
  /// result.
  int64_t late_held = 0, late_ended = 0;
  std::vector<delivery_transition> transitions;
};

} // namespace outbox
