// Queues: declaring a durable one (its type and arguments), asking how
// many messages one holds, and deleting one.
#include "core/amqp/amqp_client.hpp"

#include "core/amqp/amqp_client_impl.hpp"
#include "core/base/errors.hpp"

namespace outbox {

using namespace amqp_detail;

caf::error amqp_client::declare_queue(const std::string& name,
                                      const queue_options& opts) {
  if (!impl_->open)
    return impl_->broken("queue.declare");
  amqp_table_entry_t entries[3];
  int n = 0;
  if (opts.max_length) {
    entries[n].key = amqp_cstring_bytes("x-max-length");
    entries[n].value.kind = AMQP_FIELD_KIND_I64;
    entries[n].value.value.i64 = *opts.max_length;
    ++n;
  }
  if (opts.reject_overflow) {
    entries[n].key = amqp_cstring_bytes("x-overflow");
    entries[n].value.kind = AMQP_FIELD_KIND_UTF8;
    entries[n].value.value.bytes = amqp_cstring_bytes("reject-publish");
    ++n;
  }
  // Said also for classic: RabbitMQ 3.10 takes an explicit "classic" for a
  // queue declared without the argument and the other way round, and a
  // vhost's default type (newer brokers) cannot turn ours into another.
  entries[n].key = amqp_cstring_bytes("x-queue-type");
  entries[n].value.kind = AMQP_FIELD_KIND_UTF8;
  entries[n].value.value.bytes = amqp_cstring_bytes(to_string(opts.type));
  ++n;
  amqp_table_t args{n, entries};
  amqp_queue_declare(impl_->conn, channel, bytes(name), 0, /*durable*/ 1,
                     /*exclusive*/ 0, /*auto_delete*/ 0, args);
  auto reply = amqp_get_rpc_reply(impl_->conn);
  bool inequivalent = reply.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION
                      && reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD
                      && static_cast<amqp_channel_close_t*>(reply.reply.decoded)
                             ->reply_code
                           == AMQP_PRECONDITION_FAILED;
  auto err = impl_->check(reply, "queue.declare");
  if (!err || !inequivalent || !impl_->open)
    return err;
  // The broker's text names the argument, but it is the broker's: our own
  // words name the queue and what to do.
  return make_error(errc::broker_error,
                    "queue \"" + name + "\" exists with another queue type (or "
                      "other arguments) than the " + to_string(opts.type)
                      + " queue declared here (code 406, PRECONDITION_FAILED); "
                        "delete it or configure its type (queueType)");
}

caf::expected<int64_t> amqp_client::ready_messages(const std::string& name) {
  if (!impl_->open)
    return impl_->broken("queue.declare");
  // Passive: only asks. A queue that does not exist closes the channel
  // (404), which check() reopens.
  auto* ok = amqp_queue_declare(impl_->conn, channel, bytes(name), /*passive*/ 1,
                                0, 0, 0, amqp_empty_table);
  if (auto err = impl_->check(amqp_get_rpc_reply(impl_->conn), "queue.declare"))
    return err;
  if (ok == nullptr)
    return impl_->broken("queue.declare");
  return static_cast<int64_t>(ok->message_count);
}

caf::error amqp_client::delete_queue(const std::string& name) {
  if (!impl_->open)
    return impl_->broken("queue.delete");
  amqp_queue_delete(impl_->conn, channel, bytes(name), 0, 0);
  return impl_->check(amqp_get_rpc_reply(impl_->conn), "queue.delete");
}

} // namespace outbox
