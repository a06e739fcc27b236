// The limits an event must keep to be accepted, in one place. The SQL
// publish function (schema/008_publish_limits.sql) checks the same numbers:
// change them together. Every limit keeps an event within what every later
// stage can carry: a btree entry of the coalescing index, a time_point
// (nanoseconds, ends in 2262), an IEEE double for JSON numbers, a parser
// that recurses per nesting level, a job message of sane size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace outbox::limits {

/// event_type: 1..255 bytes, no control characters (SQL: octet_length).
constexpr size_t max_event_type_bytes = 255;

/// key, when given: 1..1024 bytes, no control characters. A btree entry
/// holds at most about 2,700 bytes; the coalescing index holds the key
/// with the job and the queue (up to 247 bytes each).
constexpr size_t max_key_bytes = 1024;

/// ttl_seconds: 0 (never expires) .. 100 years.
constexpr int64_t max_ttl_seconds = 3'153'600'000;

/// expires_at: from 1970-01-01 (inclusive) to 2200-01-01 (exclusive),
/// as Unix seconds; finite (SQL also refuses 'infinity' and '-infinity').
constexpr int64_t min_expires_at_unix = 0;
constexpr int64_t end_expires_at_unix = 7'258'118'400; // 2200-01-01T00:00:00Z

/// payload: at most 8 MiB.
constexpr size_t max_payload_bytes = 8 * 1024 * 1024;

/// application/json payloads: at most 64 nested arrays and objects, every
/// number within +-1.7976931348623157e308 (an IEEE double: what a worker
/// parses JSON numbers into) and of at most 16383 decimal places (what
/// PostgreSQL's numeric holds).
constexpr int max_json_depth = 64;
constexpr double max_json_number = 1.7976931348623157e308;

/// headers: at most 64, names 1..128 bytes, values strings of at most
/// 4096 bytes.
constexpr size_t max_headers = 64;
constexpr size_t max_header_name_bytes = 128;
constexpr size_t max_header_value_bytes = 4096;

/// True when `s` has a C0 control character or DEL (NUL included).
bool has_control_chars(const std::string& s);

/// Looks at a JSON text without parsing it: the nesting depth of arrays
/// and objects outside strings, the numbers' range, `\u0000` escapes (the database's text
/// cannot hold NUL) and lone UTF-16 surrogate escapes (PostgreSQL refuses
/// them; RapidJSON accepts a lone low one). Returns the safe message of the
/// first problem, nullopt when there is none. It reads the text once, with
/// no recursion, so any depth is safe to look at.
std::optional<std::string> json_text_problem(const std::string& json);

} // namespace outbox::limits
