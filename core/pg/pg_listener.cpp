#include "core/pg/pg_listener.hpp"

#include <poll.h>

#include <libpq-fe.h>

#include "core/base/errors.hpp"

namespace outbox {

caf::expected<pg_listener> pg_listener::listen(const std::string& url,
                                               const std::string& channel) {
  auto conn = pg_connection::connect(url);
  if (!conn)
    return conn.error();
  pg_listener out{std::move(*conn), channel};
  if (auto err = out.resume())
    return err;
  return out;
}

caf::error pg_listener::pause() {
  return set_listening(false);
}

caf::error pg_listener::resume() {
  return set_listening(true);
}

caf::error pg_listener::set_listening(bool on) {
  auto verb = on ? "LISTEN " : "UNLISTEN ";
  if (auto err = conn_.exec_script(on ? "listen" : "unlisten",
                                   verb + conn_.quote_identifier(channel_)))
    return err;
  paused_ = !on;
  return caf::none;
}

caf::expected<int> pg_listener::wait(std::chrono::milliseconds timeout) {
  auto payloads = wait_payloads(timeout);
  if (!payloads)
    return payloads.error();
  return static_cast<int>(payloads->size());
}

caf::expected<std::vector<std::string>>
pg_listener::wait_payloads(std::chrono::milliseconds timeout) {
  auto* c = conn_.native();
  auto lost = [] {
    return make_error(errc::database_unavailable, "listen connection lost");
  };
  if (!conn_.ok())
    return lost();
  std::vector<std::string> out;
  pollfd pfd{PQsocket(c), POLLIN, 0};
  int ready = poll(&pfd, 1, static_cast<int>(timeout.count()));
  if (ready <= 0)
    return out; // a timeout, or interrupted: the caller simply waits again
  if (!PQconsumeInput(c))
    return lost();
  while (PGnotify* m = PQnotifies(c)) {
    out.emplace_back(m->extra ? m->extra : "");
    PQfreemem(m);
  }
  return out;
}

notice_listener_factory pg_listener::factory(std::string url, std::string channel) {
  return [url = std::move(url), channel = std::move(channel)]()
           -> caf::expected<std::unique_ptr<notice_listener>> {
    auto l = listen(url, channel);
    if (!l)
      return std::move(l.error());
    return std::unique_ptr<notice_listener>{new pg_listener{std::move(*l)}};
  };
}

} // namespace outbox
