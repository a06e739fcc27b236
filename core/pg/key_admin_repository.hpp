// The operator's verbs on ordered keys (outboxctl blocked/skip): which keys
// wait for an operator, and letting one go past the delivery that holds it.
// Whatever ends a hold hands the key on in the same transaction
// (core/pg/key_release.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/delivery_status.hpp"
#include "core/domain/schema_names.hpp"
#include "core/pg/key_release.hpp"

namespace outbox {

class pg_connection;

/// A key whose earliest holding delivery failed or expired for good on a
/// route with `onFailure: block` (never the payload).
struct blocked_key {
  std::string key, job, queue;
  int64_t delivery_id = 0, event_id = 0; ///< the head that blocks it
  delivery_status status = delivery_status::failed; ///< failed or expired
  int32_t attempts = 0;
  std::string last_error;
  int64_t since = 0;  ///< the head's finished_at, Unix seconds
  int64_t parked = 0; ///< deliveries of the key waiting behind it
};

/// What skip did to one id.
enum class skip_verdict {
  skipped,     ///< now failed with skipped_at; its key was handed on
  unknown,     ///< no such delivery
  not_ordered, ///< its route does not order by key
  not_holding, ///< ordered, but it does not hold its key (waiting, done, skipped)
};

struct skip_outcome {
  skip_verdict verdict = skip_verdict::unknown;
  delivery_status before = delivery_status::failed; ///< when skipped
};

class key_admin_repository {
public:
  explicit key_admin_repository(schema_names names);

  /// Blocked keys, the longest blocked first, optionally of one queue.
  caf::expected<std::vector<blocked_key>>
  blocked(pg_connection& conn, const std::optional<std::string>& queue,
          int32_t limit);

  /// Lets the key of each delivery that holds it go on: the delivery is
  /// failed for good (its error kept if it failed, "skipped by an
  /// operator (was S)" otherwise), skipped_at is set, and the next
  /// delivery of the key is made ready, in one transaction.
  caf::expected<std::vector<skip_outcome>>
  skip(pg_connection& conn, const std::vector<int64_t>& ids);

private:
  schema_names names_;
  key_release release_;
};

} // namespace outbox
