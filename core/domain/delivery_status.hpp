// The states of a delivery (docs/design.md "Delivery states") as a type:
// which exist, which are final, and which transitions the design allows.
// The text spellings are those of the database's CHECK constraint and of
// the CLI; they appear only where a status crosses one of those edges.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace outbox {

enum class delivery_status : uint8_t {
  pending,    ///< waiting to be sent, first time or again
  dispatched, ///< claimed and published; waits for the result
  completed,  ///< the worker reported completed
  failed,     ///< gave up (or quarantined)
  expired,    ///< its time to live ran out first
  superseded, ///< a newer delivery of its key replaced or merged it
};

/// Every status, in lifecycle order.
const std::array<delivery_status, 6>& all_delivery_statuses();

/// Every delivery status as the database spells it, in lifecycle order:
/// the keys of status_counts::per_status.
const std::vector<std::string>& delivery_statuses();

/// The database and CLI spelling: "pending", "dispatched", ...
const char* to_string(delivery_status x);

/// Reads a database or CLI spelling; nullopt for anything else.
std::optional<delivery_status> parse_delivery_status(std::string_view text);

/// True for the statuses no pass touches again (only operator verbs do).
bool is_final(delivery_status x);

/// True when the design's transition table has `from` → `to` (by a pass
/// or by an operator verb).
bool may_transition(delivery_status from, delivery_status to);

/// True for the final statuses `outboxctl retry` sends again.
bool is_retryable_by_operator(delivery_status x);

} // namespace outbox
