// What the result and sweep passes share: the dispatched deliveries they
// lock and decide about in C++, and the one statement that writes the
// decided transitions back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/delivery.hpp"
#include "core/domain/schema_names.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

/// A locked delivery with what a retry-or-fail decision needs.
struct locked_delivery {
  int64_t id = 0, event_id = 0;
  delivery_status status = delivery_status::pending;
  std::string dispatch_id, job, queue;
  int32_t attempts = 0;
  delivery_rules rules;
  std::optional<time_point> expires_at;
  time_point now; ///< the database's clock
  bool ordered = false; ///< of an ordered key: its end releases the key
};

/// The ids of the ordered ones among `ds` (for key_release).
std::vector<int64_t> ordered_ids(const std::vector<locked_delivery>& ds);

/// Fills the slot "{{decision_columns}}" of `sql` with the columns
/// read_locked reads.
std::string with_decision_columns(std::string sql);

/// The rows of a statement over with_decision_columns.
caf::expected<std::vector<locked_delivery>>
read_locked(const pg_rows& rows, const char* statement);

/// Decided transitions, as the update statement's arrays take them, and
/// as the lifecycle log reports them.
class transition_batch {
public:
  /// `d` goes to `status` with `attempts_now`; a retry (pending) is ready
  /// at `available_at`; `reason` becomes last_error unless nullopt.
  void add(const locked_delivery& d, delivery_status status,
           int32_t attempts_now, std::optional<time_point> available_at,
           pg_param reason);

  /// Adds the retry-or-fail (or expire) transition after a failed attempt
  /// and returns the status it decided.
  delivery_status add_failure(const locked_delivery& d, std::string reason);

  bool empty() const { return ids_.empty(); }

  pg_params params() const;

  /// The transitions added, for the lifecycle log.
  std::vector<delivery_transition> take_done() { return std::move(done_); }

private:
  std::vector<pg_param> ids_, dispatch_ids_, statuses_, attempts_, available_,
    reasons_;
  std::vector<delivery_transition> done_;
};

/// Counts a decided failure under the counter of its status.
void count_failure(delivery_status status, int64_t& retried, int64_t& failed,
                   int64_t& expired);

/// The statement that applies a transition_batch to rows this transaction
/// locked.
std::string transition_update_sql(const schema_names& names);

/// Runs that statement as `name` for the batch, if it has any transition.
caf::error apply_transitions(pg_connection& conn, const char* name,
                             const std::string& update_sql,
                             const transition_batch& batch);

} // namespace outbox
