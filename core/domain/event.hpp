// An integration event as the producer API stores it: a type, the
// serializer's payload string, and the optional key, time to live and
// headers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/domain/retry_policy.hpp"

namespace outbox {

struct event {
  std::string event_type;
  std::string payload;
  std::string content_type = "application/json";
  /// Coalescing key: a newer event of the same key may replace this one
  /// while its delivery waits.
  std::optional<std::string> key;
  /// Time to live from the commit; with `expires_at` the earlier wins.
  std::optional<int64_t> ttl_seconds;
  std::optional<time_point> expires_at;
  /// Metadata such as trace context; stored as a JSON object.
  std::map<std::string, std::string> headers;
};

} // namespace outbox
