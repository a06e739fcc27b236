// Small text helpers shared by messages, logs, the status table and the
// rules for names the broker carries.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace outbox {

/// Joins `xs` with `sep` between them ("" for none).
std::string join(const std::vector<std::string>& xs, const std::string& sep);

/// True when `s` is well-formed UTF-8.
bool is_valid_utf8(std::string_view s);

/// The rule a name that travels as an AMQP short string (a queue, a job,
/// an event type) breaks, or "" when it is fine: 1 to `max_bytes` bytes of
/// valid UTF-8, no control character, not only white space.
std::string check_amqp_name(std::string_view name, size_t max_bytes);

/// Text someone else wrote (a key, a worker's reason) made safe for a
/// terminal and for one line: in double quotes, with `"` and `\` escaped,
/// and control characters, DEL and C1 controls as \xNN. Other UTF-8 stays.
std::string quoted_text(const std::string& s);

} // namespace outbox
