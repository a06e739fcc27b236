#include "worker/job_screen.hpp"

#include "core/amqp/wire.hpp"

namespace outbox {

std::optional<send_result> attribute_by_properties(const incoming_message& m) {
  auto id = parse_decimal_id(m.message_id);
  if (!id || !is_uuid(m.correlation_id) || m.type.empty() || m.type.size() > 255
      || m.type.find('\0') != std::string::npos)
    return std::nullopt;
  send_result r;
  r.delivery_id = *id;
  r.dispatch_id = m.correlation_id;
  r.job = m.type;
  return r;
}

} // namespace outbox
