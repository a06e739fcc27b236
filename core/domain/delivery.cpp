#include "core/domain/delivery.hpp"

namespace outbox {

const char* to_string(outcome x) {
  switch (x) {
    case outcome::completed: return "completed";
    case outcome::retry: return "retry";
    case outcome::failed: return "failed";
  }
  return "failed";
}

std::optional<outcome> parse_outcome(const std::string& text) {
  if (text == "completed") return outcome::completed;
  if (text == "retry") return outcome::retry;
  if (text == "failed") return outcome::failed;
  return std::nullopt;
}

} // namespace outbox
