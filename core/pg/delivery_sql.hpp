// Pieces of SQL and of row decoding that the delivery repositories (claim,
// results, sweep, admin, status) share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "core/domain/delivery_status.hpp"
#include "core/domain/retry_policy.hpp"

namespace outbox {

class pg_rows;

/// Replaces the first `slot` ("{{name}}") in `sql` with `with`.
void fill_slot(std::string& sql, const std::string& slot, const std::string& with);

/// SQL for a timestamptz column as Unix microseconds. 'infinity' and
/// '-infinity' (no number: casting them fails the whole statement) become
/// the ends of bigint, which from_unix_micros reads as the ends of
/// time_point.
std::string unix_micros(const std::string& column);

/// A column of unix_micros, nullopt for NULL.
std::optional<time_point> optional_micros(const pg_rows& rows, int row, int col);

/// A status column; errc::database_error naming `statement` for a spelling
/// outside the table's CHECK constraint (our bug, not the data's).
caf::expected<delivery_status> read_status(const pg_rows& rows, int row,
                                           int col, const char* statement);

} // namespace outbox
