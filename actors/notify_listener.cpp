#include "actors/notify_listener.hpp"

#include <optional>

#include "actors/pass_loop.hpp"
#include "core/errors.hpp"
#include "core/logging.hpp"
#include "core/pg_listener.hpp"
#include "core/timestamp.hpp"

namespace outbox {

void notify_listener(caf::blocking_actor* self, std::string database_url,
                     std::string channel, router_actor router) {
  using namespace std::chrono;
  bool running = true;
  bool wanted = true; // the router's demand (listen_demand.hpp)
  std::optional<pg_listener> listener;
  failure_streak listen_failures;
  auto poll_mailbox = [&](milliseconds wait) {
    self->receive([&](caf::exit_msg& em) {
      running = false;
      self->fail_state(std::move(em.reason));
    }, [&](listen_atom, bool want) {
      wanted = want;
    }, caf::after(wait) >> [] {});
  };
  while (running) {
    poll_mailbox(milliseconds{0});
    if (!running)
      break;
    if (!wanted) {
      // The router passes by itself: stop the notifications, then wait
      // for the router's next word instead of the socket's. A connection
      // that cannot even UNLISTEN is dropped; a new one comes when wanted.
      if (listener && !listener->paused())
        if (auto err = listener->pause())
          listener.reset();
      poll_mailbox(milliseconds{200});
      continue;
    }
    if (listener && listener->paused()) {
      if (auto err = listener->resume()) {
        listener.reset(); // reconnects below, and wakes the router then
        continue;
      }
      // Events may have committed while nobody listened.
      self->send(router, wake_atom::value);
    }
    if (!listener) {
      auto l = pg_listener::listen(database_url, channel);
      if (!l) {
        if (listen_failures.failed())
          logger("router")->warn("event=listen_failed attempts={} since={} error={}",
                                 listen_failures.count(),
                                 format_timestamp(listen_failures.since()),
                                 kv(render(l.error())));
        poll_mailbox(listen_failures.backoff(milliseconds{5000}));
        continue;
      }
      listener.emplace(std::move(*l));
      listen_failures.succeeded();
      // Events may have arrived while nobody listened.
      self->send(router, wake_atom::value);
    }
    // Short waits keep the mailbox (and so shutdown) responsive.
    auto n = listener->wait(milliseconds{200});
    if (!n) {
      listener.reset();
      continue;
    }
    if (*n > 0)
      self->send(router, wake_atom::value);
  }
}

} // namespace outbox
