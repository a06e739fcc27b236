#include "core/amqp/amqp_url.hpp"

#include <cctype>
#include <vector>

#include <amqp.h>

#include "core/base/errors.hpp"

namespace outbox {

namespace {

constexpr const char* query_rule
  = "has a query other than heartbeat=N (seconds, 0..3600) and, with amqps://, "
    "cacertfile, certfile and keyfile";

// Decodes %XX (a path may hold '&' or '='); nullopt for a broken escape.
std::optional<std::string> percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1]))
        || !std::isxdigit(static_cast<unsigned char>(s[i + 2])))
      return std::nullopt;
    out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
    i += 2;
  }
  return out;
}

bool parse_heartbeat(const std::string& value, amqp_url_parts& parts) {
  if (value.empty() || value.size() > 4)
    return false;
  int n = 0;
  for (auto c : value) {
    if (c < '0' || c > '9')
      return false;
    n = n * 10 + (c - '0');
  }
  if (n > 3600)
    return false;
  parts.heartbeat = n;
  return true;
}

// One key=value of the query. The TLS keys are RabbitMQ's URI spec names;
// they only make sense (and are only taken) with amqps://.
bool parse_item(const std::string& item, amqp_url_parts& parts) {
  auto eq = item.find('=');
  if (eq == std::string::npos)
    return false;
  auto key = item.substr(0, eq);
  auto value = percent_decode(item.substr(eq + 1));
  if (!value)
    return false;
  if (key == "heartbeat")
    return parse_heartbeat(*value, parts);
  std::string* field = key == "cacertfile" ? &parts.cacertfile
                       : key == "certfile" ? &parts.certfile
                       : key == "keyfile"  ? &parts.keyfile
                                           : nullptr;
  if (field == nullptr || !parts.tls || value->empty())
    return false;
  *field = *value;
  return true;
}

bool parse_query(const std::string& query, amqp_url_parts& parts) {
  size_t start = 0;
  while (start <= query.size()) {
    auto end = std::min(query.find('&', start), query.size());
    if (!parse_item(query.substr(start, end - start), parts))
      return false;
    start = end + 1;
  }
  return true;
}

} // namespace

caf::expected<amqp_url_parts> parse_amqp_url(const std::string& url) {
  // The query starts after the user info (a password holds no raw '?').
  auto at = url.rfind('@');
  auto q = url.find('?', at == std::string::npos ? 0 : at);
  std::string base = url.substr(0, q);
  std::vector<char> buf(base.begin(), base.end());
  buf.push_back('\0');
  amqp_connection_info info;
  amqp_default_connection_info(&info);
  // rabbitmq-c knows amqps:// and then defaults the port to 5671.
  if (amqp_parse_url(buf.data(), &info) != AMQP_STATUS_OK)
    return make_error(errc::invalid_url,
                      "is not a valid amqp://user:password@host:port/vhost URL");
  amqp_url_parts parts;
  parts.tls = info.ssl != 0;
  if (q != std::string::npos && !parse_query(url.substr(q + 1), parts))
    return make_error(errc::invalid_url, query_rule);
  if (parts.certfile.empty() != parts.keyfile.empty())
    return make_error(errc::invalid_url, "gives certfile without keyfile or keyfile "
                                         "without certfile: give both or neither");
  parts.host = info.host;
  parts.user = info.user;
  parts.password = info.password;
  // "amqp://host/" names the empty vhost by the letter of the AMQP URI spec,
  // but everybody means RabbitMQ's default "/".
  parts.vhost = (info.vhost && *info.vhost) ? info.vhost : "/";
  parts.port = info.port;
  return parts;
}

} // namespace outbox
