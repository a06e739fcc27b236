#include "core/producer/producer.hpp"

#include <cstdio>

#include "core/amqp/wire.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/domain/retry_policy.hpp"

namespace outbox {

producer::producer(config cfg, std::chrono::milliseconds confirm_timeout)
  : cfg_(std::move(cfg)), confirm_timeout_(confirm_timeout),
    store_(cfg_.names), session_({cfg_.amqp_url, "outbox producer (direct)", {}, {}, 0}),
    rng_(std::random_device{}()) {
}

producer::~producer() = default;

caf::expected<int64_t> producer::add(pg_conn* conn, const event& ev) {
  if (!cfg_.publishes_directly(ev.event_type))
    return store_.add(conn, ev);
  return publish_directly(ev);
}

std::string producer::next_message_id() {
  // A random UUID (version 4): unique without a database sequence.
  auto a = rng_(), b = rng_();
  a = (a & 0xFFFFFFFFFFFF0FFFull) | 0x0000000000004000ull;
  b = (b & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  char buf[37];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(a >> 32), static_cast<unsigned>((a >> 16) & 0xFFFF),
                static_cast<unsigned>(a & 0xFFFF), static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFull));
  return buf;
}

std::vector<outgoing_message> producer::direct_messages(const event& ev) {
  auto log = logger("producer");
  auto now = clock_type::now();
  // The event's own time to live and expiry (the earlier wins), then each
  // route's below, as in the outbox.
  auto ev_expiry = effective_expiry(ev.ttl_seconds.value_or(0), now,
                                    ev.expires_at);
  auto routes = cfg_.routes_for(ev.event_type);
  if (routes.empty())
    log->warn("event=direct_without_route eventType={} action=dropped",
              kv(ev.event_type));
  std::vector<outgoing_message> messages;
  for (auto& r : routes) {
    auto expiry = effective_expiry(r.rules.ttl_seconds, now, ev_expiry);
    int64_t ttl_ms = 0;
    if (expiry) {
      ttl_ms = std::chrono::duration_cast<std::chrono::milliseconds>(*expiry - now)
                 .count();
      if (ttl_ms <= 0) {
        log->info("event=direct_expired eventType={} job={} queue={}",
                  kv(ev.event_type), kv(r.job), kv(r.queue));
        continue; // as in the outbox: never sent once its time is over
      }
    }
    messages.push_back(direct_job_message(r.job, r.queue, ev, next_message_id(),
                                          ttl_ms));
  }
  return messages;
}

caf::expected<int64_t> producer::publish_directly(const event& ev) {
  if (auto invalid = validate_event(ev))
    return invalid;
  auto messages = direct_messages(ev);
  if (messages.empty())
    return int64_t{0};
  // Between events the connection may sit idle for longer than the broker
  // waits for heartbeats: the session sends one that is due, and finds a
  // connection the broker dropped meanwhile before it is used.
  if (auto err = session_.ready())
    return err;
  for (auto& m : messages)
    if (auto err = session_.declare(m.routing_key, cfg_.queue_type_of(m.routing_key)))
      return err;
  auto statuses = session_.publish(messages, confirm_timeout_);
  auto log = logger("producer");
  for (size_t i = 0; i < messages.size(); ++i) {
    auto st = i < statuses.size() ? statuses[i] : publish_status::lost;
    if (st != publish_status::confirmed) {
      log->warn("event=direct_publish_failed eventType={} queue={} status={}",
                kv(ev.event_type), kv(messages[i].routing_key), to_string(st));
      return make_error(errc::publish_failed,
                        "direct publish of \"" + ev.event_type + "\" to queue \""
                          + messages[i].routing_key + "\": " + to_string(st));
    }
  }
  log->info("event=published_direct eventType={} messages={}",
            kv(ev.event_type), messages.size());
  return int64_t{0};
}

} // namespace outbox
