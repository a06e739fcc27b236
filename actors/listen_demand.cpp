#include "actors/listen_demand.hpp"

namespace outbox {

std::optional<bool> listen_demand::after_pass(bool self_paced) {
  streak_ = self_paced ? streak_ + 1 : 0;
  bool wanted = pause_after_ <= 0 || streak_ < pause_after_;
  if (wanted == wanted_)
    return std::nullopt;
  wanted_ = wanted;
  return wanted;
}

} // namespace outbox
