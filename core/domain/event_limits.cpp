#include "core/domain/event_limits.hpp"

#include <algorithm>

namespace outbox::limits {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

// The code unit of a "\uXXXX" escape starting at s[i] (the backslash), or
// -1 when it is not one.
long unicode_escape(const std::string& s, size_t i) {
  if (i + 6 > s.size() || s[i + 1] != 'u')
    return -1;
  long v = 0;
  for (size_t k = i + 2; k < i + 6; ++k) {
    int d = hex_digit(s[k]);
    if (d < 0)
      return -1;
    v = v * 16 + d;
  }
  return v;
}

// The problem of the JSON number token `t`, nullopt when it is fine:
// beyond +-max_json_number, judged on its decimal digits exactly as
// PostgreSQL's numeric compares them (a parse into a double may round
// either way, and RapidJSON's normal precision does not round correctly at
// this edge); or with more decimal places than a numeric holds (16383:
// PostgreSQL refuses the JSON, RapidJSON would read 0).
std::optional<std::string> number_problem(const std::string& t) {
  size_t i = t.empty() || t[0] != '-' ? 0 : 1;
  std::string digits;     // integer and fraction digits, no leading zeros
  int64_t point = 0;      // value = 0.<digits> * 10^(point + exponent)
  int64_t places = 0;     // fraction digits as written
  bool in_fraction = false;
  for (; i < t.size() && t[i] != 'e' && t[i] != 'E'; ++i) {
    if (t[i] == '.') {
      in_fraction = true;
      continue;
    }
    places += in_fraction;
    if (digits.empty() && t[i] == '0') {
      if (in_fraction)
        --point;
    } else {
      digits += t[i];
      if (!in_fraction)
        ++point;
    }
  }
  int64_t exponent = 0;
  if (i < t.size()) {
    bool negative = ++i < t.size() && t[i] == '-';
    if (i < t.size() && (t[i] == '-' || t[i] == '+'))
      ++i;
    // Digits only (a malformed token is the parser's to refuse), capped
    // far beyond any limit so that it cannot overflow.
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i)
      exponent = std::min<int64_t>(exponent * 10 + (t[i] - '0'), 1'000'000'000);
    if (negative)
      exponent = -exponent;
  }
  if (places - exponent > 16383)
    return std::string{"payload: is not valid JSON (a number with more than "
                       "16383 decimal places)"};
  while (!digits.empty() && digits.back() == '0')
    digits.pop_back();
  if (digits.empty())
    return std::nullopt; // zero
  // max_json_number = 0.17976931348623157 * 10^309
  const std::string max_digits = "17976931348623157";
  auto magnitude = point + exponent;
  if (magnitude > 309 || (magnitude == 309 && digits.compare(max_digits) > 0))
    return std::string{"payload: JSON numbers must be within "
                       "+-1.7976931348623157e308 (a double)"};
  return std::nullopt;
}

bool number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e'
         || c == 'E';
}

} // namespace

bool has_control_chars(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f)
      return true;
  return false;
}

std::optional<std::string> json_text_problem(const std::string& json) {
  int depth = 0;
  bool in_string = false;
  bool after_high_surrogate = false; // the previous escape was \uD800-\uDBFF
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '"') {
        in_string = false;
      } else if (c == '\\') {
        long unit = unicode_escape(json, i);
        if (unit == 0)
          return std::string{"payload: JSON strings must not contain \\u0000 "
                             "(the database's text cannot hold NUL)"};
        bool low = unit >= 0xDC00 && unit <= 0xDFFF;
        if (low && !after_high_surrogate)
          return std::string{"payload: is not valid JSON (a lone UTF-16 "
                             "surrogate escape)"};
        after_high_surrogate = unit >= 0xD800 && unit <= 0xDBFF;
        long next = after_high_surrogate ? unicode_escape(json, i + 6) : 0;
        if (after_high_surrogate && (next < 0xDC00 || next > 0xDFFF))
          return std::string{"payload: is not valid JSON (a lone UTF-16 "
                             "surrogate escape)"};
        i += unit >= 0 ? 5 : 1; // past the escape
        continue;
      }
      after_high_surrogate = false;
      continue;
    }
    after_high_surrogate = false;
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_json_depth)
        return "payload: JSON nesting must be at most "
               + std::to_string(max_json_depth) + " deep";
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t end = i;
      while (end < json.size() && number_char(json[end]))
        ++end;
      if (auto problem = number_problem(json.substr(i, end - i)))
        return problem;
      i = end - 1;
    }
  }
  return std::nullopt;
}

} // namespace outbox::limits
