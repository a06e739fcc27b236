#include "worker/job_screen.hpp"

#include <cctype>


namespace outbox {

namespace {

bool is_uuid(const std::string& s) {
  if (s.size() != 36)
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i])))
      return false;
  }
  return true;
}

std::optional<int64_t> positive_id(const std::string& s) {
  if (s.empty() || s.size() > 18)
    return std::nullopt;
  int64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n > 0 ? std::optional<int64_t>{n} : std::nullopt;
}

} // namespace

std::optional<send_result> attribute_by_properties(const incoming_message& m) {
  auto id = positive_id(m.message_id);
  if (!id || !is_uuid(m.correlation_id) || m.type.empty() || m.type.size() > 255
      || m.type.find('\0') != std::string::npos)
    return std::nullopt;
  send_result r;
  r.delivery_id = *id;
  r.dispatch_id = m.correlation_id;
  r.job = m.type;
  return r;
}

} // namespace outbox
