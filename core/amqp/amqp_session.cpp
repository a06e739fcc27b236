#include "core/amqp/amqp_session.hpp"

#include <algorithm>

#include "core/amqp/amqp_url.hpp"
#include "core/amqp/amqp_url_list.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"

namespace outbox {

namespace {

// Says where a connection went when it is not where the last one was: an
// operator sees a failover (host and port only, never the URL).
void log_failover(const std::string& name, const std::string& url, size_t index,
                  size_t count) {
  auto parts = parse_amqp_url(url);
  logger("amqp")->info("event=broker_failover connection={} broker={}/{} at={}",
                       kv(name), index + 1, count,
                       parts ? kv(parts->host + ":" + std::to_string(parts->port))
                             : std::string{"-"});
}

} // namespace

amqp_session::amqp_session(amqp_session_options opts) : opts_(std::move(opts)) {
}

caf::error amqp_session::set_up(amqp_client& c) {
  queue_options declared;
  declared.type = opts_.type;
  for (auto& q : opts_.declare)
    if (auto err = c.declare_queue(q, declared))
      return err;
  for (auto& [q, type] : extra_) {
    queue_options own;
    own.type = type;
    if (auto err = c.declare_queue(q, own))
      return err;
  }
  if (!opts_.consume.empty())
    return c.consume(opts_.consume, opts_.prefetch);
  return caf::none;
}

caf::error amqp_session::connect() {
  reset();
  auto urls = split_amqp_urls(opts_.url);
  if (!urls)
    return urls.error();
  auto n = urls->size();
  auto start = lost_ ? (current_ + 1) % n : current_ % n;
  caf::error last;
  for (size_t k = 0; k < n; ++k) {
    auto i = (start + k) % n;
    auto c = amqp_client::connect((*urls)[i], opts_.name);
    if (!c) {
      last = std::move(c.error());
      continue;
    }
    if (i != current_)
      log_failover(opts_.name, (*urls)[i], i, n);
    current_ = i;
    lost_ = false;
    // A refused declaration is the cluster's answer, not this node's: the
    // other nodes would give the same.
    if (auto err = set_up(**c))
      return err;
    client_ = std::move(*c);
    return caf::none;
  }
  if (n == 1)
    return last;
  return make_error(last == errc::broker_error
                      ? errc::broker_error
                      : errc::broker_unavailable,
                    "none of the " + std::to_string(n)
                      + " brokers of the list answered; the last: "
                      + context_of(last));
}

caf::error amqp_session::ready() {
  // A consumer's keep_alive would read (and drop) its deliveries.
  bool live = client_
              && (opts_.consume.empty() ? client_->keep_alive() : client_->is_open());
  return live ? caf::none : connect();
}

caf::error amqp_session::declare(const std::string& queue, queue_type type) {
  if (std::find(opts_.declare.begin(), opts_.declare.end(), queue)
        != opts_.declare.end()
      || std::find(extra_.begin(), extra_.end(), std::make_pair(queue, type))
           != extra_.end())
    return caf::none; // declared by the connect
  if (auto err = ready())
    return err;
  queue_options own;
  own.type = type;
  if (auto err = client_->declare_queue(queue, own)) {
    reset();
    return err;
  }
  extra_.emplace_back(queue, type);
  return caf::none;
}

std::vector<publish_status>
amqp_session::publish(const std::vector<outgoing_message>& ms,
                      std::chrono::milliseconds timeout) {
  std::vector<publish_status> out(ms.size(), publish_status::unsent);
  if (!is_open() && connect())
    return out;
  out = client_->publish_batch(ms, timeout);
  std::vector<size_t> again;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] == publish_status::unsent)
      again.push_back(i);
  if (!again.empty() && !connect()) {
    std::vector<outgoing_message> resend;
    resend.reserve(again.size());
    for (auto i : again)
      resend.push_back(ms[i]);
    auto second = client_->publish_batch(resend, timeout);
    for (size_t k = 0; k < again.size() && k < second.size(); ++k)
      out[again[k]] = second[k];
  }
  if (!is_open())
    reset();
  return out;
}

caf::expected<std::optional<incoming_message>>
amqp_session::next_message(std::chrono::milliseconds timeout) {
  if (!client_)
    return make_error(errc::broker_unavailable,
                      "consume: the broker connection is broken");
  auto m = client_->next_message(timeout);
  if (!m)
    reset();
  return m;
}

caf::error amqp_session::ack(uint64_t tag, bool multiple) {
  if (!client_)
    return make_error(errc::broker_unavailable,
                      "basic.ack: the broker connection is broken");
  auto err = client_->ack(tag, multiple);
  if (err)
    reset();
  return err;
}

bool amqp_session::keep_alive() {
  if (client_ && client_->keep_alive())
    return true;
  reset();
  return false;
}

caf::expected<int64_t> amqp_session::ready_messages(const std::string& queue) {
  if (!is_open())
    return make_error(errc::broker_unavailable,
                      "queue.declare: the broker connection is broken");
  auto n = client_->ready_messages(queue);
  if (!n && !client_->is_open())
    reset();
  return n;
}

bool amqp_session::blocked() const {
  return client_ && client_->blocked();
}

bool amqp_session::is_open() const {
  return client_ && client_->is_open();
}

void amqp_session::reset() {
  if (client_)
    lost_ = true;
  client_.reset();
}

} // namespace outbox
