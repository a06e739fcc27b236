// Reading the rows a claim statement (or the handed read) returns: sends,
// expiries, the next ready time, the cursor and the in-flight room.
#pragma once

#include <cstdint>
#include <optional>

#include <caf/expected.hpp>

#include "core/domain/delivery_passes.hpp"

namespace outbox {

class pg_rows;

namespace claim_detail {

// What one claim statement returned, row by row.
struct claim_rows {
  int64_t taken = 0; ///< sends and expiries
  std::optional<claim_cursor> last; ///< the last key taken, if any
};

// Reads a claim's rows into `out`.
caf::expected<claim_rows> read_claim(const pg_rows& rows, claim_result& out,
                                     const char* statement);

} // namespace claim_detail
} // namespace outbox
