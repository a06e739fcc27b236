// For the tests that read an outboxd's HTTP endpoint (and a Prometheus
// server's): a node started with --http on loopback, and a GET.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <httplib.h>

#include "tests/integration/child_process.hpp"

namespace outbox::testing {

/// outboxd --config `config` --http 127.0.0.1:`http` `args...`, its output
/// in `log`.
inline std::unique_ptr<child_process> http_node(const std::string& config,
                                                uint16_t http,
                                                std::vector<std::string> args,
                                                const std::string& log) {
  args.insert(args.begin(),
              {"--config", config, "--http", "127.0.0.1:" + std::to_string(http)});
  return std::make_unique<child_process>(OUTBOXD_PATH, args, log);
}

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
