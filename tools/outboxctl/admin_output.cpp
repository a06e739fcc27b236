#include "tools/outboxctl/admin_output.hpp"

#include <ctime>
#include <iostream>

#include "core/base/errors.hpp"

namespace outbox {

int admin_usage(const std::string& why) {
  std::cerr << "outboxctl: " << why << "\n";
  return admin_exit_usage;
}

int admin_db_failed(const std::string& verb, const caf::error& err) {
  std::cerr << "outboxctl " << verb << ": " << render(err) << "\n";
  return admin_exit_failure;
}

// Times in the operator's own time zone (TZ), as they read them elsewhere.
std::string local_time(int64_t unix_seconds) {
  if (unix_seconds == 0)
    return "-";
  std::time_t t = unix_seconds;
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S %Z", &tm);
  return buf;
}

std::optional<std::vector<int64_t>> parse_ids(const std::vector<std::string>& xs) {
  std::vector<int64_t> out;
  for (auto& x : xs) {
    if (x.empty() || x.size() > 18 || x.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    out.push_back(std::stoll(x));
    if (out.back() == 0) // ids start at 1: 0 names nothing
      return std::nullopt;
  }
  return out;
}

namespace {

void hex_byte(std::string& out, unsigned char c) {
  static const char digits[] = "0123456789abcdef";
  out += "\\x";
  out += digits[c >> 4];
  out += digits[c & 0xf];
}

} // namespace

// A terminal acts on ESC, CSI and the C1 controls (U+0080..U+009F, UTF-8
// C2 80..C2 9F): none of them reaches it. Quotes show where a key with
// spaces begins and ends.
std::string quoted_text(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    auto next = i + 1 < s.size() ? static_cast<unsigned char>(s[i + 1]) : 0;
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      hex_byte(out, c);
    } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
      hex_byte(out, c);
      hex_byte(out, next);
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

} // namespace outbox
