// ISO 8601 UTC timestamps, as event payloads and the wire carry them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace outbox {

using clock_type = std::chrono::system_clock;
using time_point = clock_type::time_point;

/// Unix time in milliseconds, now.
int64_t now_ms();

/// Formats as "2026-11-29T20:31:02Z", or with ".ffffff" when the time has a
/// sub-second part.
std::string format_timestamp(time_point t);

/// Parses "YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|+00:00)"; nullopt on anything else,
/// also for times a time_point cannot hold (before 1677 or after 2262).
std::optional<time_point> parse_timestamp(const std::string& text);

// A time_point counts nanoseconds in an int64: it ends in April 2262 and
// begins in 1677. The database's times (microseconds, up to year 294276)
// and long TTLs go past that, and a plain conversion wraps around to the
// other end. These saturate at time_point::max() / min() instead, which is
// "later than anything" / "earlier than anything" for every comparison
// the retry and expiry arithmetic makes.

/// Converts Unix microseconds (as the database's times are read).
time_point from_unix_micros(int64_t us);

/// Returns `t + secs`, or the end of the range it would pass.
time_point plus_seconds(time_point t, int64_t secs);

} // namespace outbox
