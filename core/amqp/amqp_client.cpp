#include "core/amqp/amqp_client.hpp"

#include <map>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <amqp.h>
#include <amqp_framing.h>

#include "core/amqp/amqp_socket.hpp"
#include "core/amqp/amqp_url_list.hpp"
#include "core/base/errors.hpp"

namespace outbox {

namespace {

constexpr amqp_channel_t channel = 1;

// How long a publish still waits for confirms once the broker said it
// blocks publishers (connection.blocked).
constexpr auto blocked_confirm_grace = std::chrono::milliseconds{500};

// The longest a request-response call (a declare, say) waits for the
// broker's answer: a connection that went quiet is dropped, not waited on.
constexpr timeval rpc_timeout{10, 0};
constexpr auto connect_timeout = std::chrono::seconds{5};

amqp_bytes_t bytes(const std::string& s) {
  return amqp_bytes_t{s.size(), const_cast<char*>(s.data())};
}

std::string text(amqp_bytes_t b) {
  return b.bytes ? std::string{static_cast<char*>(b.bytes), b.len} : std::string{};
}

// A message's headers as an AMQP table of long strings; `entries` holds
// the table's storage and must outlive the publish.
amqp_table_t header_table(const std::map<std::string, std::string>& headers,
                          std::vector<amqp_table_entry_t>& entries) {
  entries.clear();
  for (auto& [name, value] : headers) {
    amqp_table_entry_t e{};
    e.key = bytes(name);
    e.value.kind = AMQP_FIELD_KIND_UTF8;
    e.value.value.bytes = bytes(value);
    entries.push_back(e);
  }
  return amqp_table_t{static_cast<int>(entries.size()), entries.data()};
}

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

timeval to_timeval(std::chrono::microseconds d) {
  if (d.count() < 0)
    d = std::chrono::microseconds{0};
  return timeval{static_cast<time_t>(d.count() / 1000000),
                 static_cast<suseconds_t>(d.count() % 1000000)};
}

// Holds a batch's writes back until the whole batch is written, so that it
// leaves in as few TCP segments as fit it. rabbitmq-c pushes out every
// message on its own (its last frame is sent without MSG_MORE), and the
// broker then wakes for each one; a batch of 20 became 20 segments. If the
// option cannot be set, the messages simply go out one by one as before.
class corked_socket {
public:
  explicit corked_socket(int fd) : fd_(fd) { set(1); }
  ~corked_socket() { set(0); } // uncorking sends what is held at once
  corked_socket(const corked_socket&) = delete;
  corked_socket& operator=(const corked_socket&) = delete;

private:
  void set(int on) {
    if (fd_ >= 0)
      setsockopt(fd_, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
  }
  int fd_;
};

} // namespace

namespace {

// The messages of one publish_batch still waiting for their confirm.
struct confirm_tracker {
  std::vector<publish_status>& out;
  std::map<uint64_t, size_t> pending;               // delivery tag -> index
  std::map<std::string, std::vector<size_t>> by_id; // message id -> indexes

  // Settles one tag, or every tag up to it with `multiple`. A returned
  // message is acked afterwards: the return decides.
  void settle(uint64_t tag, bool multiple, publish_status status) {
    auto first = multiple ? pending.begin() : pending.find(tag);
    auto last = multiple ? pending.upper_bound(tag)
                         : (first == pending.end() ? first : std::next(first));
    for (auto it = first; it != last; ++it)
      if (out[it->second] != publish_status::returned)
        out[it->second] = status;
    pending.erase(first, last);
  }
};

} // namespace

struct amqp_client::impl {
  amqp_connection_state_t conn = nullptr;
  bool open = false;
  /// The broker blocks publishers (a memory or disk alarm) until it says
  /// connection.unblocked; and whether it did at any time during the
  /// current publish.
  bool blocked = false;
  bool blocked_in_publish = false;
  bool confirms = false;
  uint64_t next_tag = 1;
  std::chrono::seconds heartbeat{0};
  /// When this side last wrote (publishes, heartbeats); keep_alive() sends
  /// a heartbeat half an interval after it. rabbitmq-c's own timer waits a
  /// whole interval, which leaves a caller that comes by only now and then
  /// too close to the broker's limit of two.
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();

  ~impl() {
    if (conn == nullptr)
      return;
    if (open) {
      amqp_channel_close(conn, channel, AMQP_REPLY_SUCCESS);
      amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
    }
    amqp_destroy_connection(conn);
  }

  caf::error broken(const char* what) {
    open = false;
    return make_error(errc::broker_unavailable,
                      std::string{what} + ": the broker connection is broken");
  }

  // Answers a server's channel close and reopens the channel, so that one
  // refused operation does not cost the connection.
  caf::error reopen_channel() {
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
  caf::error check(amqp_rpc_reply_t r, const char* what) {
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
  bool keep_alive() {
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

  // A resource alarm of the broker begins or ends (true: `id` was one).
  bool note_blocking(amqp_method_number_t id) {
    if (id == AMQP_CONNECTION_BLOCKED_METHOD)
      blocked = blocked_in_publish = true;
    else if (id == AMQP_CONNECTION_UNBLOCKED_METHOD)
      blocked = false;
    else
      return false;
    return true;
  }

  // Puts the channel in confirm mode once; tags count from 1 after it.
  bool enable_confirms() {
    if (confirms)
      return true;
    amqp_confirm_select(conn, channel);
    if (check(amqp_get_rpc_reply(conn), "confirm.select"))
      return false;
    confirms = true;
    return true;
  }

  // Publishes every message persistent and mandatory without waiting: the
  // confirms arrive later, pipelined. False once the socket refused a write.
  bool send_all(const std::vector<outgoing_message>& ms, confirm_tracker& t) {
    corked_socket corked{amqp_get_sockfd(conn)};
    std::vector<amqp_table_entry_t> entries;
    for (size_t i = 0; i < ms.size(); ++i) {
      auto& m = ms[i];
      amqp_basic_properties_t props{};
      props._flags = AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_CONTENT_TYPE_FLAG
                     | AMQP_BASIC_MESSAGE_ID_FLAG
                     | AMQP_BASIC_CORRELATION_ID_FLAG | AMQP_BASIC_TYPE_FLAG;
      props.delivery_mode = AMQP_DELIVERY_PERSISTENT;
      props.content_type = bytes(m.content_type);
      props.message_id = bytes(m.message_id);
      props.correlation_id = bytes(m.correlation_id);
      props.type = bytes(m.type);
      if (!m.expiration.empty()) {
        props._flags |= AMQP_BASIC_EXPIRATION_FLAG;
        props.expiration = bytes(m.expiration);
      }
      if (!m.headers.empty()) {
        props._flags |= AMQP_BASIC_HEADERS_FLAG;
        props.headers = header_table(m.headers, entries);
      }
      // rabbitmq-c returns 0 before the broker confirms anything: only the
      // confirm proves delivery.
      if (amqp_basic_publish(conn, channel, amqp_empty_bytes,
                             bytes(m.routing_key), /*mandatory*/ 1,
                             /*immediate*/ 0, &props, bytes(m.body))
          != AMQP_STATUS_OK) {
        // This message did not get out whole (the broker drops a partial
        // one) and the rest were never written; the earlier ones did.
        for (size_t k = i; k < ms.size(); ++k)
          t.out[k] = publish_status::unsent;
        open = false;
        return false;
      }
      last_write = std::chrono::steady_clock::now();
      t.pending.emplace(next_tag++, i);
      t.by_id[m.message_id].push_back(i);
    }
    return true;
  }

  // Reads frames until every message is settled, the deadline passes or
  // the channel or connection breaks.
  void await_confirms(confirm_tracker& t,
                      std::chrono::steady_clock::time_point deadline) {
    while (!t.pending.empty()) {
      auto left = std::chrono::duration_cast<std::chrono::microseconds>(
        deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return;
      amqp_frame_t f;
      auto tv = to_timeval(left);
      int rc = amqp_simple_wait_frame_noblock(conn, &f, &tv);
      if (rc != AMQP_STATUS_OK) {
        open = open && rc == AMQP_STATUS_TIMEOUT;
        return;
      }
      if (f.frame_type != AMQP_FRAME_METHOD)
        continue;
      auto id = f.payload.method.id;
      if (note_blocking(id)) {
        // Blocked: the broker reads nothing more until the alarm ends, so
        // waiting out the whole timeout only hides the alarm from the
        // dispatcher. What is still unconfirmed comes back `blocked`.
        if (blocked)
          deadline = std::min(deadline, std::chrono::steady_clock::now()
                                          + blocked_confirm_grace);
        continue;
      }
      if (id == AMQP_BASIC_ACK_METHOD) {
        auto* a = static_cast<amqp_basic_ack_t*>(f.payload.method.decoded);
        t.settle(a->delivery_tag, a->multiple, publish_status::confirmed);
      } else if (id == AMQP_BASIC_NACK_METHOD) {
        auto* n = static_cast<amqp_basic_nack_t*>(f.payload.method.decoded);
        t.settle(n->delivery_tag, n->multiple, publish_status::nacked);
      } else if (id == AMQP_BASIC_RETURN_METHOD) {
        read_return(t);
      } else if (id == AMQP_CHANNEL_CLOSE_METHOD) {
        reopen_channel();
        return;
      } else if (id == AMQP_CONNECTION_CLOSE_METHOD) {
        amqp_connection_close_ok_t ok{};
        amqp_send_method(conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
        open = false;
        return;
      }
    }
  }

  // Reads a basic.return's content and marks the messages of its id.
  void read_return(confirm_tracker& t) {
    amqp_message_t m;
    if (amqp_read_message(conn, channel, &m, 0).reply_type
        != AMQP_RESPONSE_NORMAL) {
      open = false;
      return;
    }
    if (m.properties._flags & AMQP_BASIC_MESSAGE_ID_FLAG) {
      auto it = t.by_id.find(text(m.properties.message_id));
      if (it != t.by_id.end())
        for (auto i : it->second)
          t.out[i] = publish_status::returned;
    }
    amqp_destroy_message(&m);
  }
};

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

std::vector<publish_status>
amqp_client::publish_batch(const std::vector<outgoing_message>& ms,
                           std::chrono::milliseconds timeout) {
  auto& p = *impl_;
  // A connection the broker dropped while we were idle is found here,
  // before a byte is written: its messages are unsent, not lost.
  if (!p.keep_alive())
    return std::vector<publish_status>(ms.size(), publish_status::unsent);
  if (ms.empty())
    return {};
  if (!p.enable_confirms()) // nothing written: unsent if the connection broke
    return std::vector<publish_status>(ms.size(), p.open ? publish_status::lost
                                                         : publish_status::unsent);
  std::vector<publish_status> out(ms.size(), publish_status::lost);
  confirm_tracker track{out, {}, {}};
  p.blocked_in_publish = p.blocked;
  if (!p.send_all(ms, track))
    return out;
  p.await_confirms(track, std::chrono::steady_clock::now() + timeout);
  // Unconfirmed messages stay `lost`, even if returned: we cannot know
  // more. Unless the broker blocked publishers meanwhile: it holds what it
  // has not read yet, and may take it after the alarm.
  for (auto& [tag, index] : track.pending)
    out[index] = p.blocked_in_publish && p.open ? publish_status::blocked
                                                : publish_status::lost;
  return out;
}

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

bool amqp_client::is_open() const {
  return impl_->open;
}

bool amqp_client::blocked() const {
  return impl_->open && impl_->blocked;
}

bool amqp_client::keep_alive() {
  return impl_->keep_alive();
}

std::chrono::seconds amqp_client::heartbeat() const {
  return impl_->heartbeat;
}

} // namespace outbox
