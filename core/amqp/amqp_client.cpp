// Connecting (each broker of a list in turn, the login with our
// capabilities, the channel), and the connection's lifetime, error
// handling and keep_alive. The other calls are in amqp_client_*.cpp.
#include "core/amqp/amqp_client.hpp"

#include "core/amqp/amqp_client_impl.hpp"
#include "core/amqp/amqp_socket.hpp"
#include "core/amqp/amqp_url_list.hpp"
#include "core/base/errors.hpp"

namespace outbox {

using namespace amqp_detail;

namespace {

// The longest a request-response call (a declare, say) waits for the
// broker's answer: a connection that went quiet is dropped, not waited on.
constexpr timeval rpc_timeout{10, 0};
constexpr auto connect_timeout = std::chrono::seconds{5};

} // namespace

amqp_client::impl::~impl() {
  if (conn == nullptr)
    return;
  if (open) {
    amqp_channel_close(conn, channel, AMQP_REPLY_SUCCESS);
    amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
  }
  amqp_destroy_connection(conn);
}

caf::error amqp_client::impl::broken(const char* what) {
  open = false;
  return make_error(errc::broker_unavailable,
                    std::string{what} + ": the broker connection is broken");
}

// Answers a server's channel close and reopens the channel, so that one
// refused operation does not cost the connection.
caf::error amqp_client::impl::reopen_channel() {
  amqp_channel_close_ok_t ok{};
  amqp_send_method(conn, channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
  confirms = false;
  next_tag = 1;
  amqp_channel_open(conn, channel);
  if (amqp_get_rpc_reply(conn).reply_type != AMQP_RESPONSE_NORMAL)
    return broken("channel.open");
  return caf::none;
}

// Converts an RPC reply to an error; the broker's reply text is external
// and is not passed on, only its code.
caf::error amqp_client::impl::check(amqp_rpc_reply_t r, const char* what) {
  switch (r.reply_type) {
    case AMQP_RESPONSE_NORMAL:
      return caf::none;
    case AMQP_RESPONSE_SERVER_EXCEPTION:
      if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
        auto* m = static_cast<amqp_channel_close_t*>(r.reply.decoded);
        auto code = m->reply_code;
        if (auto err = reopen_channel())
          return err;
        return make_error(errc::broker_error,
                          std::string{what} + " refused by the broker (code "
                            + std::to_string(code) + ")");
      }
      if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
        amqp_connection_close_ok_t ok{};
        amqp_send_method(conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
      }
      return broken(what);
    default:
      return broken(what);
  }
}

// See amqp_client::keep_alive. Frames other than a close are late
// confirms or returns of a batch that already gave up on them: dropped.
bool amqp_client::impl::keep_alive() {
  if (!open)
    return false;
  auto now = std::chrono::steady_clock::now();
  if (heartbeat.count() > 0 && now - last_write >= heartbeat / 2) {
    amqp_frame_t hb{};
    hb.frame_type = AMQP_FRAME_HEARTBEAT;
    hb.channel = 0;
    if (amqp_send_frame(conn, &hb) != AMQP_STATUS_OK) {
      open = false;
      return false;
    }
    last_write = now;
  }
  // Bounded: a broker that floods an idle publisher is not waited out.
  for (int i = 0; i < 1000; ++i) {
    amqp_frame_t f;
    timeval tv{0, 0};
    int rc = amqp_simple_wait_frame_noblock(conn, &f, &tv);
    if (rc == AMQP_STATUS_TIMEOUT)
      break;
    if (rc != AMQP_STATUS_OK) {
      open = false;
      return false;
    }
    if (f.frame_type != AMQP_FRAME_METHOD)
      continue;
    if (note_blocking(f.payload.method.id))
      continue;
    if (f.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD) {
      if (reopen_channel())
        return false;
    } else if (f.payload.method.id == AMQP_CONNECTION_CLOSE_METHOD) {
      amqp_connection_close_ok_t ok{};
      amqp_send_method(conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
      open = false;
      return false;
    }
  }
  amqp_maybe_release_buffers(conn);
  return open;
}

amqp_client::amqp_client(std::unique_ptr<impl> p) : impl_(std::move(p)) {
}

amqp_client::~amqp_client() = default;

caf::expected<std::unique_ptr<amqp_client>>
amqp_client::connect(const std::string& url, const std::string& name,
                     std::chrono::seconds heartbeat) {
  auto urls = split_amqp_urls(url);
  if (!urls)
    return urls.error();
  caf::error last;
  for (auto& one : *urls) {
    auto c = connect_one(one, name, heartbeat);
    if (c)
      return c;
    last = std::move(c.error());
  }
  return last;
}

caf::expected<std::unique_ptr<amqp_client>>
amqp_client::connect_one(const std::string& url, const std::string& name,
                         std::chrono::seconds heartbeat) {
  auto parts = parse_amqp_url(url);
  if (!parts)
    return parts.error();
  auto p = std::make_unique<impl>();
  p->conn = amqp_new_connection();
  if (auto err = open_amqp_socket(p->conn, *parts, to_timeval(connect_timeout)))
    return err;
  auto where = parts->host + ":" + std::to_string(parts->port);
  // RabbitMQ tells of a resource alarm (connection.blocked, .unblocked)
  // only to a client that says it understands them; rabbitmq-c merges
  // this with its own capabilities.
  amqp_table_entry_t capability;
  capability.key = amqp_cstring_bytes("connection.blocked");
  capability.value.kind = AMQP_FIELD_KIND_BOOLEAN;
  capability.value.value.boolean = 1;
  amqp_table_entry_t entries[2];
  entries[0].key = amqp_cstring_bytes("connection_name");
  entries[0].value.kind = AMQP_FIELD_KIND_UTF8;
  entries[0].value.value.bytes = bytes(name);
  entries[1].key = amqp_cstring_bytes("capabilities");
  entries[1].value.kind = AMQP_FIELD_KIND_TABLE;
  entries[1].value.value.table = amqp_table_t{1, &capability};
  amqp_table_t props{2, entries};
  auto login = amqp_login_with_properties(
    p->conn, parts->vhost.c_str(), 0, AMQP_DEFAULT_FRAME_SIZE,
    parts->heartbeat.value_or(static_cast<int>(heartbeat.count())), &props,
    AMQP_SASL_METHOD_PLAIN,
    parts->user.c_str(), parts->password.c_str());
  if (login.reply_type != AMQP_RESPONSE_NORMAL)
    return make_error(errc::broker_unavailable,
                      "the broker at " + where
                        + " refused the login (check user, password, vhost)");
  p->open = true;
  timeval rpc_limit = rpc_timeout;
  amqp_set_rpc_timeout(p->conn, &rpc_limit);
  p->heartbeat = std::chrono::seconds{amqp_get_heartbeat(p->conn)};
  p->last_write = std::chrono::steady_clock::now();
  amqp_channel_open(p->conn, channel);
  if (auto err = p->check(amqp_get_rpc_reply(p->conn), "channel.open"))
    return err;
  return std::unique_ptr<amqp_client>{new amqp_client(std::move(p))};
}

bool amqp_client::is_open() const {
  return impl_->open;
}

bool amqp_client::keep_alive() {
  return impl_->keep_alive();
}

std::chrono::seconds amqp_client::heartbeat() const {
  return impl_->heartbeat;
}

} // namespace outbox
