// What outboxctl's operator verbs take besides the verb: the arguments
// that tools/outboxctl/admin_verbs.hpp and tools/outboxctl/key_verbs.hpp both read, in a
// header of their own so that neither includes the other.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace outbox {

/// The value of a number flag nobody gave.
constexpr int64_t not_given = std::numeric_limits<int64_t>::min();

struct admin_args {
  std::vector<std::string> ids;      ///< positional ids after the verb
  std::optional<std::string> queue;  ///< --queue
  std::vector<std::string> statuses; ///< --status
  int64_t hours = not_given;         ///< --hours (prune)
  int64_t limit = not_given;         ///< --limit (listings; 100 if not given)
  std::optional<std::string> pause_for; ///< --for (pause): "90s", "15m", ...
  std::optional<std::string> reason;    ///< --reason (pause)
};

} // namespace outbox
