#include "actors/notify_listener.hpp"

#include <optional>

#include "actors/pass_loop.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/base/timestamp.hpp"
#include "core/pg/pg_listener.hpp"

namespace outbox {

namespace {

using std::chrono::milliseconds;

// The listener's state between two turns of its loop; each step either
// makes progress or waits on the mailbox, so shutdown stays responsive.
class listen_loop {
public:
  listen_loop(caf::blocking_actor* self, std::string database_url,
              std::string channel, router_actor router)
    : self_(self),
      database_url_(std::move(database_url)),
      channel_(std::move(channel)),
      router_(std::move(router)) {
  }

  void run() {
    while (running_) {
      poll_mailbox(milliseconds{0});
      if (!running_)
        break;
      if (!wanted_) {
        pause();
        continue;
      }
      if (!resume() || !connect())
        continue;
      wait_for_notifications();
    }
  }

private:
  void poll_mailbox(milliseconds wait) {
    self_->receive([&](caf::exit_msg& em) {
      running_ = false;
      self_->fail_state(std::move(em.reason));
    }, [&](listen_atom, bool want) {
      wanted_ = want;
    }, caf::after(wait) >> [] {});
  }

  // The router passes by itself: stop the notifications, then wait for the
  // router's next word instead of the socket's. A connection that cannot
  // even UNLISTEN is dropped; a new one comes when wanted.
  void pause() {
    if (listener_ && !listener_->paused())
      if (auto err = listener_->pause())
        listener_.reset();
    poll_mailbox(milliseconds{200});
  }

  /// False when the paused connection broke (a new one comes next turn).
  bool resume() {
    if (!listener_ || !listener_->paused())
      return true;
    if (auto err = listener_->resume()) {
      listener_.reset();
      return false;
    }
    // Events may have committed while nobody listened.
    self_->send(router_, wake_atom::value);
    return true;
  }

  /// False after a failed attempt (it has waited its backoff then).
  bool connect() {
    if (listener_)
      return true;
    auto l = pg_listener::listen(database_url_, channel_);
    if (!l) {
      if (listen_failures_.failed())
        logger("router")->warn("event=listen_failed attempts={} since={} error={}",
                               listen_failures_.count(),
                               format_timestamp(listen_failures_.since()),
                               kv(render(l.error())));
      poll_mailbox(listen_failures_.backoff(milliseconds{5000}));
      return false;
    }
    listener_.emplace(std::move(*l));
    listen_failures_.succeeded();
    // Events may have arrived while nobody listened.
    self_->send(router_, wake_atom::value);
    return true;
  }

  void wait_for_notifications() {
    // Short waits keep the mailbox (and so shutdown) responsive.
    auto n = listener_->wait(milliseconds{200});
    if (!n)
      listener_.reset();
    else if (*n > 0)
      self_->send(router_, wake_atom::value);
  }

  caf::blocking_actor* self_;
  std::string database_url_;
  std::string channel_;
  router_actor router_;
  bool running_ = true;
  bool wanted_ = true; // the router's demand (listen_demand.hpp)
  std::optional<pg_listener> listener_;
  failure_streak listen_failures_;
};

} // namespace

void notify_listener(caf::blocking_actor* self, std::string database_url,
                     std::string channel, router_actor router) {
  listen_loop{self, std::move(database_url), std::move(channel),
              std::move(router)}
    .run();
}

} // namespace outbox
