// The one way the outbox reads JSON it did not write itself: wire messages,
// config files and payloads. Every read is bounded in size and nesting
// depth and runs without recursion (RapidJSON's iterative parser), so no
// input, however deep or long, can exhaust the stack or the memory of the
// reading process. Text must be UTF-8 and hold no NUL byte (RapidJSON
// would stop reading there and take what follows for the end). The reasons
// say which rule was broken and never quote the input.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace outbox {

struct json_limits {
  size_t max_bytes;
  /// Objects and arrays nested inside each other: `{}` is 1, `{"a":[]}` 2.
  unsigned max_depth;
};

/// An event's JSON payload, as the producer API and the SQL function
/// accept it (schema/008 states the same numbers).
inline constexpr json_limits payload_json_limits{8u << 20, 64};

/// A job or result message: a job message carries one payload one level
/// down, and a non-JSON payload may grow sixfold when escaped.
inline constexpr json_limits message_json_limits{64u << 20, 65};

/// A config file.
inline constexpr json_limits config_json_limits{1u << 20, 16};

/// Parses `text` into `doc` within `limits`. Returns why it is refused
/// ("not valid JSON at offset 12: ...", "nested deeper than 64 levels",
/// "larger than 1048576 bytes", "a string is not valid UTF-8", ...), or
/// nullopt when `doc` holds the value.
std::optional<std::string> parse_json(std::string_view text,
                                      const json_limits& limits,
                                      rapidjson::Document& doc);

/// True when an object names one member twice (RapidJSON keeps both and
/// finds the first, so a reader and a later writer could disagree).
bool has_duplicate_keys(const rapidjson::Value& object);

} // namespace outbox
