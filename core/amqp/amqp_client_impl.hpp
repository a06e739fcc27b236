// The state behind amqp_client and what its files share (the channel,
// rabbitmq-c byte conversions): internal to core/amqp, included only by
// amqp_client.cpp and amqp_client_*.cpp, which define impl's members.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <amqp.h>
#include <amqp_framing.h>

#include "core/amqp/amqp_client.hpp"

namespace outbox {

namespace amqp_detail {

constexpr amqp_channel_t channel = 1;

inline amqp_bytes_t bytes(const std::string& s) {
  return amqp_bytes_t{s.size(), const_cast<char*>(s.data())};
}

inline std::string text(amqp_bytes_t b) {
  return b.bytes ? std::string{static_cast<char*>(b.bytes), b.len} : std::string{};
}

inline timeval to_timeval(std::chrono::microseconds d) {
  if (d.count() < 0)
    d = std::chrono::microseconds{0};
  return timeval{static_cast<time_t>(d.count() / 1000000),
                 static_cast<suseconds_t>(d.count() % 1000000)};
}

struct confirm_tracker; // defined in amqp_client_publish.cpp

} // namespace amqp_detail

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

  // amqp_client.cpp: lifetime, errors, the channel, keep_alive.
  ~impl();
  caf::error broken(const char* what);
  caf::error reopen_channel();
  caf::error check(amqp_rpc_reply_t r, const char* what);
  bool keep_alive();

  // amqp_client_publish.cpp: publishing with confirms, blocked tracking.
  bool note_blocking(amqp_method_number_t id);
  bool enable_confirms();
  bool send_all(const std::vector<outgoing_message>& ms,
                amqp_detail::confirm_tracker& t);
  void await_confirms(amqp_detail::confirm_tracker& t,
                      std::chrono::steady_clock::time_point deadline);
  void read_return(amqp_detail::confirm_tracker& t);
};

} // namespace outbox
