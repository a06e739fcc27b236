// How long to wait before reconnecting after failures in a row: every actor
// and the worker back off the same way.
#pragma once

#include <chrono>

namespace outbox {

/// The capped exponential backoff after `failures` (>= 1) failures in a
/// row: 200 ms, 400 ms, 800 ms ... up to `cap`. A restarting database or
/// broker is retried quickly at first without being hammered later.
std::chrono::milliseconds backoff_delay(int failures,
                                        std::chrono::milliseconds cap);

} // namespace outbox
