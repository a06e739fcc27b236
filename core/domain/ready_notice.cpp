#include "core/domain/ready_notice.hpp"

#include <cstdio>
#include <random>

namespace outbox {

std::string new_wake_origin() {
  std::random_device rd;
  auto bits = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(bits));
  return buf;
}

std::string ready_payload(const std::string& origin, const std::string& queue) {
  return origin + " " + queue;
}

std::optional<ready_notice> parse_ready_payload(const std::string& payload) {
  auto space = payload.find(' ');
  if (space == 0 || space == std::string::npos || space + 1 == payload.size())
    return std::nullopt;
  return ready_notice{payload.substr(0, space), payload.substr(space + 1)};
}

} // namespace outbox
