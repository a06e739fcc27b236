#include "http/http_flags.hpp"

#include <algorithm>
#include <cctype>

#include "core/base/errors.hpp"
#include "cli/node_options.hpp"

namespace outbox {

namespace {

bool has_port(const std::string& text) {
  auto colon = text.rfind(':');
  auto tail = colon == std::string::npos ? text : text.substr(colon + 1);
  return !tail.empty()
         && std::all_of(tail.begin(), tail.end(),
                        [](unsigned char c) { return std::isdigit(c) != 0; });
}

} // namespace

caf::expected<std::optional<host_port>>
read_http_flag(const std::string& text, const node_settings& node) {
  if (text.empty())
    return std::optional<host_port>{};
  if (node.once)
    return make_error(errc::config_invalid,
                      "--http: not with --once (the node exits after its pass)");
  auto full = text;
  if (!has_port(text)) {
    if (!node.has(node_role::status))
      return make_error(errc::config_invalid,
                        "--http: give a port (only the status node has a "
                        "default, "
                          + std::to_string(default_http_port) + ")");
    if (!full.empty() && full.back() == ':')
      full.pop_back();
    full += ":" + std::to_string(default_http_port);
  }
  auto hp = parse_host_port(full, "127.0.0.1");
  if (!hp)
    return make_error(errc::config_invalid, "--http: " + context_of(hp.error()));
  if (!is_loopback_host(hp->host) && !node.tls && !node.insecure)
    return make_error(errc::config_invalid,
                      "--http: " + hp->host
                        + " is not a loopback address, and plain HTTP lets "
                          "anyone who reaches it read the node's figures; "
                          "give TLS certificates (HTTPS with client "
                          "certificates), or --insecure to serve without them");
  return std::optional<host_port>{*hp};
}

} // namespace outbox
