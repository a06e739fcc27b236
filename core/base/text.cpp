#include "core/base/text.hpp"

#include <algorithm>

#include <rapidjson/encodings.h>
#include <rapidjson/memorystream.h>

namespace outbox {

std::string join(const std::vector<std::string>& xs, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i)
    out += (i == 0 ? "" : sep) + xs[i];
  return out;
}

bool is_valid_utf8(std::string_view s) {
  rapidjson::MemoryStream in{s.data(), s.size()};
  while (in.Tell() < s.size()) {
    unsigned cp = 0;
    if (!rapidjson::UTF8<>::Decode(in, &cp))
      return false;
  }
  return true;
}

std::string check_amqp_name(std::string_view name, size_t max_bytes) {
  if (name.empty())
    return "must not be empty";
  if (name.size() > max_bytes)
    return "must have at most " + std::to_string(max_bytes) + " bytes";
  if (!is_valid_utf8(name))
    return "must be valid UTF-8";
  auto control = [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  };
  if (std::any_of(name.begin(), name.end(), control))
    return "must not contain control characters";
  if (name.find_first_not_of(' ') == std::string_view::npos)
    return "must not be only spaces";
  return {};
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
