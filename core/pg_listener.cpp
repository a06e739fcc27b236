#include "core/pg_listener.hpp"

#include <poll.h>

#include <libpq-fe.h>

#include "core/errors.hpp"

namespace outbox {

caf::expected<pg_listener> pg_listener::listen(const std::string& url,
                                               const std::string& channel) {
  auto conn = pg_connection::connect(url);
  if (!conn)
    return conn.error();
  if (auto err = conn->exec_script("listen",
                                   "LISTEN " + conn->quote_identifier(channel)))
    return err;
  return pg_listener{std::move(*conn)};
}

caf::expected<int> pg_listener::wait(std::chrono::milliseconds timeout) {
  auto* c = conn_.native();
  auto lost = [] {
    return make_error(errc::database_unavailable, "listen connection lost");
  };
  if (!conn_.ok())
    return lost();
  pollfd pfd{PQsocket(c), POLLIN, 0};
  int ready = poll(&pfd, 1, static_cast<int>(timeout.count()));
  if (ready < 0)
    return 0; // interrupted: the caller simply waits again
  if (ready == 0)
    return 0;
  if (!PQconsumeInput(c))
    return lost();
  int n = 0;
  while (PGnotify* m = PQnotifies(c)) {
    ++n;
    PQfreemem(m);
  }
  return n;
}

} // namespace outbox
