#include "core/amqp/queue_type.hpp"

namespace outbox {

const char* to_string(queue_type x) {
  return x == queue_type::quorum ? "quorum" : "classic";
}

std::optional<queue_type> parse_queue_type(const std::string& text) {
  if (text == "classic")
    return queue_type::classic;
  if (text == "quorum")
    return queue_type::quorum;
  return std::nullopt;
}

} // namespace outbox
