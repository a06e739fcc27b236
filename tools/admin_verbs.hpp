// outboxctl's operator verbs over the database: failed, expired, retry,
// forget, prune, quarantined, discard, blocked, skip (tools/key_verbs.hpp). Each returns the process exit code: 0 done, 1 the database
// refused or some ids could not be handled, 2 bad arguments.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config.hpp"

namespace outbox {

/// The value of a number flag nobody gave.
constexpr int64_t not_given = std::numeric_limits<int64_t>::min();

struct admin_args {
  std::vector<std::string> ids;      ///< positional ids after the verb
  std::optional<std::string> queue;  ///< --queue
  std::vector<std::string> statuses; ///< --status
  int64_t hours = not_given;         ///< --hours (prune)
  int64_t limit = not_given;         ///< --limit (listings; 100 if not given)
};

int run_admin_verb(const std::string& verb, const admin_args& args,
                   const config& cfg);

/// True for the verbs run_admin_verb knows.
bool is_admin_verb(const std::string& verb);

} // namespace outbox
