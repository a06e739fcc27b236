// ISO 8601 UTC timestamps, as event payloads and the wire carry them.
#pragma once

#include <optional>
#include <string>

#include "core/retry_policy.hpp"

namespace outbox {

/// Formats as "2026-11-29T20:31:02Z", or with ".ffffff" when the time has a
/// sub-second part.
std::string format_timestamp(time_point t);

/// Parses "YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|+00:00)"; nullopt on anything else.
std::optional<time_point> parse_timestamp(const std::string& text);

} // namespace outbox
