// Consuming: basic.consume with a prefetch, each delivery read with its
// properties and headers, and its ack or reject.
#include "core/amqp/amqp_client.hpp"

#include <map>

#include "core/amqp/amqp_client_impl.hpp"
#include "core/base/errors.hpp"

namespace outbox {

using namespace amqp_detail;

namespace {

// The string entries of a received headers table; a worker has no use for
// the others (and the relay sends none).
std::map<std::string, std::string> header_strings(const amqp_table_t& t) {
  std::map<std::string, std::string> out;
  for (int i = 0; i < t.num_entries; ++i) {
    auto& e = t.entries[i];
    if (e.value.kind == AMQP_FIELD_KIND_UTF8 || e.value.kind == AMQP_FIELD_KIND_BYTES)
      out.emplace(text(e.key), text(e.value.value.bytes));
  }
  return out;
}

} // namespace

caf::error amqp_client::consume(const std::string& queue, uint16_t prefetch) {
  if (!impl_->open)
    return impl_->broken("basic.consume");
  amqp_basic_qos(impl_->conn, channel, 0, prefetch, 0);
  if (auto err = impl_->check(amqp_get_rpc_reply(impl_->conn), "basic.qos"))
    return err;
  amqp_basic_consume(impl_->conn, channel, bytes(queue), amqp_empty_bytes, 0,
                     /*no_ack*/ 0, 0, amqp_empty_table);
  return impl_->check(amqp_get_rpc_reply(impl_->conn), "basic.consume");
}

caf::expected<std::optional<incoming_message>>
amqp_client::next_message(std::chrono::milliseconds timeout) {
  auto& p = *impl_;
  if (!p.open)
    return p.broken("consume");
  amqp_maybe_release_buffers(p.conn);
  amqp_envelope_t env;
  auto tv = to_timeval(timeout);
  auto r = amqp_consume_message(p.conn, &env, &tv, 0);
  if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION
      && r.library_error == AMQP_STATUS_TIMEOUT)
    return std::optional<incoming_message>{};
  if (r.reply_type != AMQP_RESPONSE_NORMAL) {
    if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION
        && r.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
      // A method frame instead of a delivery: a close from the broker.
      amqp_frame_t f;
      if (amqp_simple_wait_frame(p.conn, &f) == AMQP_STATUS_OK
          && f.frame_type == AMQP_FRAME_METHOD
          && f.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD) {
        p.reopen_channel();
        return make_error(errc::broker_error,
                          "the broker closed the consuming channel");
      }
    }
    return p.broken("consume");
  }
  incoming_message m;
  m.delivery_tag = env.delivery_tag;
  m.redelivered = env.redelivered != 0;
  m.body = text(env.message.body);
  auto& props = env.message.properties;
  if (props._flags & AMQP_BASIC_MESSAGE_ID_FLAG)
    m.message_id = text(props.message_id);
  if (props._flags & AMQP_BASIC_CORRELATION_ID_FLAG)
    m.correlation_id = text(props.correlation_id);
  if (props._flags & AMQP_BASIC_TYPE_FLAG)
    m.type = text(props.type);
  if (props._flags & AMQP_BASIC_EXPIRATION_FLAG)
    m.expiration = text(props.expiration);
  if (props._flags & AMQP_BASIC_HEADERS_FLAG)
    m.headers = header_strings(props.headers);
  amqp_destroy_envelope(&env);
  return std::optional<incoming_message>{std::move(m)};
}

caf::error amqp_client::ack(uint64_t tag, bool multiple) {
  if (!impl_->open || amqp_basic_ack(impl_->conn, channel, tag, multiple) != 0)
    return impl_->broken("basic.ack");
  return caf::none;
}

caf::error amqp_client::reject(uint64_t tag) {
  if (!impl_->open
      || amqp_basic_reject(impl_->conn, channel, tag, /*requeue*/ 0) != 0)
    return impl_->broken("basic.reject");
  return caf::none;
}

} // namespace outbox
