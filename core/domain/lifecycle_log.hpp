// The lifecycle log lines (docs/design.md "Logging"): one key=value line per
// lifecycle event, ids and names only: never a payload or a reason that
// came from outside.
#pragma once

#include "core/domain/lifecycle_event.hpp"

namespace outbox {

/// Logs `ev` on the logger `logger_name` (the role that saw it): failures
/// and expiries as warnings, the rest as info.
void log_lifecycle(const char* logger_name, const lifecycle_event& ev);

} // namespace outbox
