// Small text helpers shared by messages, logs and the status table.
#pragma once

#include <string>
#include <vector>

namespace outbox {

/// Joins `xs` with `sep` between them ("" for none).
std::string join(const std::vector<std::string>& xs, const std::string& sep);

} // namespace outbox
