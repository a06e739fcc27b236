#include "core/domain/broker_message.hpp"

namespace outbox {

const char* to_string(publish_status x) {
  switch (x) {
    case publish_status::confirmed: return "confirmed";
    case publish_status::nacked: return "nacked";
    case publish_status::returned: return "returned";
    case publish_status::lost: return "lost";
    case publish_status::unsent: return "unsent";
    case publish_status::blocked: return "blocked";
  }
  return "lost";
}

} // namespace outbox
