// A GET to a loopback HTTP server (an outboxd --http endpoint, a Prometheus
// server) for the tests that read one.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <httplib.h>

namespace outbox::testing {

/// GET 127.0.0.1:port `path` with `params` (URL-encoded): (status, body);
/// status -1 when nothing answered.
inline std::pair<int, std::string> http_get(uint16_t port, const std::string& path,
                                            const httplib::Params& params = {}) {
  httplib::Client c{"127.0.0.1", port};
  c.set_connection_timeout(2);
  c.set_read_timeout(5);
  auto res = c.Get(path.c_str(), params, httplib::Headers{});
  if (!res)
    return {-1, ""};
  return {res->status, res->body};
}

} // namespace outbox::testing
