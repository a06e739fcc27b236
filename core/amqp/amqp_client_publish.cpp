// Publishing: a batch written persistent and mandatory in one go, then
// its publisher confirms and returns awaited, with the broker's
// connection.blocked / .unblocked tracked meanwhile.
#include "core/amqp/amqp_client.hpp"

#include <algorithm>
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

// How long a publish with more_messages waits for a frame before it asks
// for more: what a message handed to the publisher meanwhile may wait at
// most before it goes out. Not less: rabbitmq-c waits in whole
// milliseconds, and below one it polls without waiting, a busy loop.
constexpr auto more_slice = std::chrono::milliseconds{1};

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

// The messages of one publish still waiting for their confirm: the first
// batch and what more_messages added while it waited.
struct confirm_tracker {
  publish_report& report;
  std::map<uint64_t, size_t> pending;               // delivery tag -> index
  std::map<std::string, std::vector<size_t>> by_id; // message id -> indexes

  // Settles one tag, or every tag up to it with `multiple`. A returned
  // message is acked afterwards: the return decides.
  void settle(uint64_t tag, bool multiple, publish_status status) {
    auto first = multiple ? pending.begin() : pending.find(tag);
    auto last = multiple ? pending.upper_bound(tag)
                         : (first == pending.end() ? first : std::next(first));
    auto now = std::chrono::steady_clock::now();
    for (auto it = first; it != last; ++it) {
      if (report.statuses[it->second] != publish_status::returned)
        report.statuses[it->second] = status;
      report.settled_at[it->second] = now;
    }
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

// Publishes every message persistent and mandatory without waiting, after
// those the tracker holds already: the confirms arrive later, pipelined.
// False once the socket refused a write.
bool amqp_client::impl::send_all(const std::vector<outgoing_message>& ms,
                                 confirm_tracker& t) {
  auto base = t.report.statuses.size();
  t.report.statuses.resize(base + ms.size(), publish_status::lost);
  t.report.settled_at.resize(base + ms.size());
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
      for (size_t k = i; k < ms.size(); ++k) {
        t.report.statuses[base + k] = publish_status::unsent;
        t.report.settled_at[base + k] = std::chrono::steady_clock::now();
      }
      open = false;
      return false;
    }
    last_write = std::chrono::steady_clock::now();
    t.pending.emplace(next_tag++, base + i);
    t.by_id[m.message_id].push_back(base + i);
  }
  return true;
}

// Reads frames until every message is settled, the deadline passes or
// the channel or connection breaks. Between reads (after each frame, and
// every more_slice while none comes) it sends what `more` gives, until it
// says there is nothing more; each send moves the deadline to `timeout`
// after it.
void amqp_client::impl::await_confirms(
  confirm_tracker& t, std::chrono::steady_clock::time_point deadline,
  std::chrono::milliseconds timeout, const more_messages& more) {
  bool asking = static_cast<bool>(more);
  auto send_more = [&] {
    if (!asking || blocked || !open)
      return;
    auto asked = std::chrono::steady_clock::now();
    auto ms = more();
    // The time `more` took (a read of the database, a worker's handlers)
    // is not the broker's: confirms that came meanwhile wait in the socket.
    deadline += std::chrono::steady_clock::now() - asked;
    if (!ms) {
      asking = false;
      return;
    }
    if (ms->empty())
      return;
    send_all(*ms, t); // a failed write closes the connection: the read ends
    deadline = std::max(deadline, std::chrono::steady_clock::now() + timeout);
  };
  while (!t.pending.empty()) {
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return;
    if (asking && !blocked)
      left = std::min<std::chrono::microseconds>(left, more_slice);
    amqp_frame_t f;
    auto tv = to_timeval(left);
    int rc = amqp_simple_wait_frame_noblock(conn, &f, &tv);
    if (rc == AMQP_STATUS_TIMEOUT && open) {
      send_more();
      continue;
    }
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
    send_more();
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
        t.report.statuses[i] = publish_status::returned;
  }
  amqp_destroy_message(&m);
}

std::vector<publish_status>
amqp_client::publish_batch(const std::vector<outgoing_message>& ms,
                           std::chrono::milliseconds timeout) {
  return publish_pipelined(ms, timeout, {}).statuses;
}

publish_report amqp_client::publish_pipelined(const std::vector<outgoing_message>& ms,
                                              std::chrono::milliseconds timeout,
                                              const more_messages& more) {
  auto& p = *impl_;
  publish_report out;
  auto all_of = [&](publish_status st) {
    out.statuses.assign(ms.size(), st);
    out.settled_at.assign(ms.size(), std::chrono::steady_clock::now());
    return out;
  };
  // A connection the broker dropped while we were idle is found here,
  // before a byte is written: its messages are unsent, not lost.
  if (!p.keep_alive())
    return all_of(publish_status::unsent);
  if (ms.empty())
    return out;
  if (!p.enable_confirms()) // nothing written: unsent if the connection broke
    return all_of(p.open ? publish_status::lost : publish_status::unsent);
  confirm_tracker track{out, {}, {}};
  p.blocked_in_publish = p.blocked;
  if (!p.send_all(ms, track))
    return out;
  p.await_confirms(track, std::chrono::steady_clock::now() + timeout, timeout,
                   more);
  // Unconfirmed messages stay `lost`, even if returned: we cannot know
  // more. Unless the broker blocked publishers meanwhile: it holds what it
  // has not read yet, and may take it after the alarm.
  auto now = std::chrono::steady_clock::now();
  for (auto& [tag, index] : track.pending) {
    out.statuses[index] = p.blocked_in_publish && p.open ? publish_status::blocked
                                                         : publish_status::lost;
    out.settled_at[index] = now;
  }
  return out;
}

bool amqp_client::blocked() const {
  return impl_->open && impl_->blocked;
}

} // namespace outbox
