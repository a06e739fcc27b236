// What outboxctl's database verbs share: their exit codes, their errors,
// the operator's ids, times and user text as a terminal may show them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>

#include "core/base/text.hpp" // quoted_text, which the verbs print with

namespace outbox {

constexpr int admin_exit_failure = 1; ///< the database refused, or some ids
constexpr int admin_exit_usage = 2;   ///< bad arguments

/// Prints "outboxctl: why"; returns admin_exit_usage.
int admin_usage(const std::string& why);

/// Prints "outboxctl VERB: the error"; returns admin_exit_failure.
int admin_db_failed(const std::string& verb, const caf::error& err);

/// Unix seconds in the operator's own time zone (TZ); "-" for 0.
std::string local_time(int64_t unix_seconds);

/// Positive integer ids, nullopt when one is not.
std::optional<std::vector<int64_t>> parse_ids(const std::vector<std::string>& xs);


} // namespace outbox
