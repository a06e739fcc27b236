// The CAF options the outbox binaries pass through to CAF, and the ranges
// CAF itself does not check (`--scheduler.max-threads=0` divides by zero
// in its scheduler, an interval of 0 does the same in work stealing).
// Every other CAF option is refused: the binaries read no CAF config file,
// log through spdlog, and take their TLS settings from the outbox config.
#pragma once

#include <string>

#include <caf/settings.hpp>

namespace outbox {

/// True when `name` (e.g. "scheduler.max-threads") is a CAF option the
/// binaries accept.
bool is_passed_caf_option(const std::string& name);

/// Checks every CAF option in `content` against its range; returns the
/// first problem ("--scheduler.max-threads: must be 1..256"), or "".
std::string check_caf_options(const caf::settings& content);

} // namespace outbox
