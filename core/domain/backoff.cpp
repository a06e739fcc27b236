#include "core/domain/backoff.hpp"

#include <algorithm>

namespace outbox {

std::chrono::milliseconds backoff_delay(int failures,
                                        std::chrono::milliseconds cap) {
  auto shift = std::clamp(failures - 1, 0, 10);
  return std::min(std::chrono::milliseconds{200} * (1 << shift), cap);
}

} // namespace outbox
