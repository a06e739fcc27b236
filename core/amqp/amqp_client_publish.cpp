// Publishing: a batch written persistent and mandatory in one go, then
// its publisher confirms and returns awaited, with the broker's
// connection.blocked / .unblocked tracked meanwhile.
#include "core/amqp/amqp_client.hpp"

#include <map>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "core/amqp/amqp_client_impl.hpp"

namespace outbox {

using namespace amqp_detail;

namespace {

// How long a publish still waits for confirms once the broker said it
// blocks publishers (connection.blocked).
constexpr auto blocked_confirm_grace = std::chrono::milliseconds{500};

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

namespace amqp_detail {

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

} // namespace amqp_detail

// A resource alarm of the broker begins or ends (true: `id` was one).
bool amqp_client::impl::note_blocking(amqp_method_number_t id) {
  if (id == AMQP_CONNECTION_BLOCKED_METHOD)
    blocked = blocked_in_publish = true;
  else if (id == AMQP_CONNECTION_UNBLOCKED_METHOD)
    blocked = false;
  else
    return false;
  return true;
}

// Puts the channel in confirm mode once; tags count from 1 after it.
bool amqp_client::impl::enable_confirms() {
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
bool amqp_client::impl::send_all(const std::vector<outgoing_message>& ms,
                                 confirm_tracker& t) {
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
void amqp_client::impl::await_confirms(
  confirm_tracker& t, std::chrono::steady_clock::time_point deadline) {
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
void amqp_client::impl::read_return(confirm_tracker& t) {
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

bool amqp_client::blocked() const {
  return impl_->open && impl_->blocked;
}

} // namespace outbox
